#pragma once
// A new run's record folder, claimed: RUNS_DIR/RUN-ID made by this run and no
// other. A run id is a second's stamp and 16 random bits, so two runs started
// in the same second can draw the same one; the folder is made exclusively
// (mkdir, which fails on a folder that exists) and the later run draws again,
// so no two runs ever write one record.
#include <filesystem>
#include <functional>
#include <string>

#include "common/error.hpp"

namespace px::run {

namespace fs = std::filesystem;

struct ClaimedRecord {
  std::string id;  // the run's id, the folder's name
  fs::path dir;    // runs_dir/id, empty and 0700, made by this call
};

// Makes `runs_dir` (with its parents) if missing, then RUNS_DIR/ID for the
// first id `next_id` draws that names no existing entry there. Gives up after
// a bounded number of draws, saying so.
Result<ClaimedRecord> claim_record_dir(const fs::path& runs_dir, const std::function<std::string()>& next_id);

}  // namespace px::run
