#pragma once
// Following every run's events as they come (`parallex events --follow` and
// `parallex ui`'s live stream, GET /api/events): one follower for both.
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report/run_events.hpp"

namespace px::report {

// The events of `events` at or after `since` (all of them without one).
std::vector<nlohmann::ordered_json> events_since(std::vector<nlohmann::ordered_json> events,
                                                 const std::optional<std::int64_t>& since);

class EventsFollower {
 public:
  // `folders`: where runs are looked for, asked again at each poll (so runs of
  // an agent made meanwhile appear). `run_id`: only that run (all of it), and
  // the follower is done when it ends. `since_ms`: runs already there give
  // what they wrote since then too; without it, only what they write from now.
  EventsFollower(std::function<std::vector<RunsFolder>()> folders, std::string run_id = "",
                 std::optional<std::int64_t> since_ms = std::nullopt);
  // The events written since the last call, merged by time.
  std::vector<nlohmann::ordered_json> poll();
  // The one run named has ended.
  bool done() const { return !run_id_.empty() && over_.count(run_id_) > 0; }

 private:
  std::function<std::vector<RunsFolder>()> folders_;
  std::string run_id_;
  std::optional<std::int64_t> since_ms_;
  std::map<std::string, RunEvents> live_;
  std::set<std::string> over_;  // runs that write nothing more
  bool first_ = true;
};

}  // namespace px::report
