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

// Never fails as a whole: a missing source is marked in the run's "sources", a
// problem with the selection (unknown run id, no runs) goes to "problems".
Json build_report(const ReportRequest& request);

// One run's part of the report, from its record folder.
Json report_run(const ReportRequest& request, const std::filesystem::path& run_dir);

// Redacts every string value (recursively) in place.
void redact_strings(Json& value);

// The run's files read / changed, commands and URLs, over all its sessions.
Json aggregate_activity(const Json& sessions);

}  // namespace px::report
