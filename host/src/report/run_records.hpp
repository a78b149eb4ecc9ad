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

}  // namespace px::report
