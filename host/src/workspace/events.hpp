#pragma once
// Events for tab hosts (`--events FILE|fd:N`): one JSON object per line, each
// with "event" and "time" (UTC, ISO 8601), flushed as it happens. The schema is
// in docs/workspaces.md; fields are only ever added.
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::workspace {

class EventSink {
 public:
  EventSink() = default;  // disabled: emit() does nothing
  // "FILE" (created or truncated, mode 0600) or "fd:N" (an fd the caller
  // inherited, e.g. a pipe to the tab host; not closed by us).
  static Result<EventSink> open(const std::string& target);

  bool enabled() const { return fd_ >= 0; }
  // Adds "event" and "time" to `fields` and writes one line. Write errors are
  // reported once on stderr and otherwise ignored: the run goes on.
  void emit(const std::string& event, nlohmann::json fields = nlohmann::json::object());

 private:
  UniqueFd owned_;
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace px::workspace
