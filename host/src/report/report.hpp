#pragma once
// A report of what an agent did in its runs: for each run, the run record, the
// harness sessions active in its window, the hosts in its proxy log, the git
// commits made in its folder, and the sources used with what each cannot show.
// The result is one JSON document (schema in docs/reports.md); every string in
// it has been through px::redact().
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pluginhost/plugin_set.hpp"
#include "report/model.hpp"
#include "report/run_records.hpp"

namespace px::report {

inline constexpr const char* kSchema = "parallex-report/1";

struct ReportRequest {
  std::string agent;               // empty for ad-hoc runs
  std::filesystem::path runs_dir;  // RUN-ID/run.json below it
  // Where an older Parallex kept the same runs' records (under the data folder,
  // before they moved to the state folder): read too, never written.
  std::vector<std::filesystem::path> older_runs_dirs;
  // Where the harness transcripts are looked for; default: the run record's
  // policy.run_home, else `agent_home`.
  std::optional<std::filesystem::path> home;
  std::optional<std::filesystem::path> agent_home;
  std::optional<std::filesystem::path> allowed_signers;  // the agent's keys/allowed_signers
  Selection selection;
  const pluginhost::PluginSet* plugins = nullptr;  // null: no transcripts are read
};

// The request for the runs of the agent stored at `agent_root` (its runs, the
// records an older Parallex kept, its home, its allowed signers); the
// selection is the caller's.
ReportRequest agent_request(const std::string& name, const std::filesystem::path& agent_root);

// Never fails as a whole: a missing source is marked in the run's "sources", a
// problem with the selection (unknown run id, no runs) goes to "problems".
Json build_report(const ReportRequest& request);

// One run's part of the report, from its record folder.
Json report_run(const ReportRequest& request, const std::filesystem::path& run_dir);

// A run's sessions kept in its record folder (keep_sessions), which its report
// reads instead of the home's transcripts.
inline constexpr const char* kKeptSessionsFile = "sessions.json";

// Before an agent's home is rewound: the transcripts in it are what its past
// runs' reports read, and the rewind takes away those of every run after the
// snapshot. Each run of `request.runs_dir` that has no kept copy yet gets its
// sessions (and their sources) written into its record folder, so its report
// reads the same afterwards. Records an older Parallex kept elsewhere are read
// only, never written. Returns how many runs got a copy.
Result<std::size_t> keep_sessions(const ReportRequest& request);

// Redacts every string value (recursively) in place.
void redact_strings(Json& value);

// The run's files read / changed, commands and URLs, over all its sessions
// (activity.cpp). Each command and file change has its time ("at", null when
// its session gave none); a change made by a command names it ("command": its
// index in "commands", sessions' own indices mapped; null when no session
// linked them), and each command lists the files it changed ("files_changed").
Json aggregate_activity(const Json& sessions);

}  // namespace px::report
