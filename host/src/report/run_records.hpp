#pragma once
// The run records under a runs folder (RUN-ID/run.json) and which of them a
// report covers.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::report {

struct Selection {
  std::optional<std::string> run_id;  // --run ID
  bool last = false;                  // --last (also the default)
  std::optional<std::int64_t> since_ms;  // --since: runs still going at or after it
};

// Run ids under `runs_dir` (folders holding run.json or proxy.jsonl), oldest first
// (run ids sort by time). A runs folder that does not exist is an error naming it.
Result<std::vector<std::string>> list_run_ids(const std::filesystem::path& runs_dir);

// A run record folder: runs_dir/id.
struct RunRef {
  std::string id;
  std::filesystem::path dir;
};
// The runs of `runs_dir` and of `older_dirs` (where an older Parallex kept
// records: read, never written), oldest first; an id in both is runs_dir's.
// Missing older folders are skipped; a missing `runs_dir` is an error only when
// no older folder holds a run.
Result<std::vector<RunRef>> list_runs(const std::filesystem::path& runs_dir,
                                      const std::vector<std::filesystem::path>& older_dirs);

}  // namespace px::report
