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

// A run record folder: runs_dir/id.
struct RunRef {
  std::string id;
  std::filesystem::path dir;
};

struct RunListing {
  std::vector<RunRef> runs;  // oldest first, by the start time in each record
  // A record that cannot be read (a folder, a FIFO or a link as run.json;
  // empty, truncated, not JSON, nested too deep, missing its id or start):
  // one sentence each, naming the file. Skipped, never picked as the latest,
  // never written.
  std::vector<std::string> damaged;
};

// The runs of `runs_dir` and of `older_dirs` (where an older Parallex kept
// records: read, never written), oldest first; an id in both is runs_dir's.
// Each record is read through run::read_record (the one reader of records).
// Missing older folders are skipped; a missing `runs_dir` (or a file in its
// place) is an error only when no older folder holds a run.
Result<RunListing> list_runs(const std::filesystem::path& runs_dir,
                             const std::vector<std::filesystem::path>& older_dirs);

}  // namespace px::report
