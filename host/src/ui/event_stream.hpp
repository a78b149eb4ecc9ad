#pragma once
// GET /api/events: every run's events as server-sent events, one message an
// event: `event:` its type, `data:` the line `parallex events --json` prints
// (docs/events.md). Fed by the follower `parallex events --follow` uses
// (report/events_follow.hpp), from the runs' record files only.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "report/events_follow.hpp"

namespace px::ui {

class EventStream {
 public:
  explicit EventStream(std::optional<std::int64_t> since_ms);
  // The messages of the events written since the last call; a keep-alive
  // comment when nothing was sent for 15 s; "" otherwise.
  std::string next();

 private:
  report::EventsFollower follower_;
  std::chrono::steady_clock::time_point last_sent_;
};

// One SSE message for event `e` (no line break can end its data early: the
// JSON is on one line).
std::string sse_message(const nlohmann::ordered_json& e);

}  // namespace px::ui
