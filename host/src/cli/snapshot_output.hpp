#pragma once
// What `parallex snapshot ...` and `parallex agent snapshot|snapshots|rewind`
// print: sizes, times, a progress bar, the JSON of a snapshot and the result of
// a rewind. Implemented in cmd_snapshot_output.cpp (skipped with the snapshot
// component).
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "snapshot/snapshot.hpp"

namespace px::cli::snapshot_output {

std::string human(std::uint64_t bytes);
// local_time and info_json: snapshot/snapshot_json.hpp (the UI serves the same JSON).
void print_warnings(const std::vector<std::string>& warnings);
// Sizes say content and disk apart: "bytes" is what the files hold,
// "new_bytes" the disk space the snapshot added to the store (whole blocks per
// new file, so many small files take far more disk than they hold).
void print_taken(const snapshot::SnapshotInfo& info, bool json);
void print_list(const std::vector<snapshot::SnapshotInfo>& list, bool json, const std::string& empty_note);
// `undo_hint` is the command that rewinds to a given snapshot id, minus the id.
void print_rewind(const snapshot::RewindResult& result, bool dry_run, const std::string& what,
                  const std::string& undo_hint, bool json);
void print_prune(const snapshot::PruneResult& result, bool json);
// What a rewind would change, in a few lines: counts by kind and the first
// paths it would replace or remove (asked before an `agent rewind`).
std::string rewind_preview(const snapshot::RewindResult& dry_run, std::size_t max_paths);

// Drawn on stdout only when it is a terminal and the operation has run for a
// second; silent otherwise so scripts and logs see only the result.
class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  snapshot::ProgressFn fn();
  void clear();

 private:
  void update(const snapshot::Progress& p);

  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_{};
};

}  // namespace px::cli::snapshot_output
