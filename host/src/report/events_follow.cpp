#include "report/events_follow.hpp"

#include "run/events.hpp"
#include "run/record.hpp"

namespace px::report {

using ojson = nlohmann::ordered_json;

std::vector<ojson> events_since(std::vector<ojson> events, const std::optional<std::int64_t>& since) {
  if (!since) return events;
  std::vector<ojson> kept;
  for (auto& e : events)
    if (run::event_time_ms(e) >= *since) kept.push_back(std::move(e));
  return kept;
}

EventsFollower::EventsFollower(std::function<std::vector<RunsFolder>()> folders, std::string run_id,
                               std::optional<std::int64_t> since_ms)
    : folders_(std::move(folders)), run_id_(std::move(run_id)), since_ms_(since_ms) {}

std::vector<ojson> EventsFollower::poll() {
  for (auto& s : list_run_sources(folders_(), [&](const std::string& id) {
         return live_.count(id) || over_.count(id) || (!run_id_.empty() && id != run_id_);
       })) {
    // A run already there when the reader started: what it writes from now
    // on (with a since, what it wrote since then too); a run that ended
    // writes nothing more. A run that appears later is new: all of it. One
    // run named: all of it, and the reader ends with it.
    const bool whole = !first_ || since_ms_.has_value() || !run_id_.empty();
    if (!whole && run::record_ended(s.dir)) {
      over_.insert(s.id);
      continue;
    }
    const std::string id = s.id;
    live_.emplace(id, RunEvents(std::move(s), whole));
  }
  first_ = false;
  std::vector<std::vector<ojson>> batches;
  for (auto it = live_.begin(); it != live_.end();) {
    batches.push_back(events_since(it->second.poll(), since_ms_));
    if (it->second.ended()) {
      over_.insert(it->first);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return merge_by_time(std::move(batches));
}

}  // namespace px::report
