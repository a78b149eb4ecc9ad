#pragma once
// The runs of this user, as `parallex runs --json` prints them and
// `parallex ui` serves them (GET /api/runs): one function for both, so the
// command and the page never disagree.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace px::run {

struct RunsListing {
  // {"runs": [...], "cleaned_stale", "closed_lost", "damaged_records", "moved_aside"}
  nlohmann::json json;
  // Sentences for the user about what was cleaned up on the way (a command says them).
  std::vector<std::string> said;
};

// The live runs, each supervisor asked for its state (all at once). Before
// that, runs whose supervisor and watchdog both died are swept, and records
// left without an end are closed as lost.
RunsListing list_live_runs();

// The `limit` latest runs that ended, from their records, newest first:
// {id, agent|null, command, folder, state, started, ended, exit, ...}.
nlohmann::json recent_ended_runs(std::size_t limit);

}  // namespace px::run
