#pragma once
// The registry of live runs: runtime/runs/<run-id>.json (0600, written by the
// run's supervisor) next to runtime/runs/<run-id>.sock (its control socket).
// The runtime dir is the user's ($XDG_RUNTIME_DIR/parallex), kept 0700 and
// hidden from every sealed run.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

struct RunEntry {
  std::string id;
  std::string agent;  // empty for ad-hoc runs
  std::vector<std::string> command;
  pid_t pid = 0;                // the supervisor's
  std::uint64_t pid_start = 0;  // its start time, so a reused pid is not taken for it
  pid_t child_pid = 0;          // the sealed child, 0 until launched
  std::uint64_t child_start = 0;
  pid_t watchdog_pid = 0;  // the run's watchdog, a child of the supervisor that is not the run's
  // The run's cgroup, empty in the process-tree fallback. With the child's
  // pid and start, what `pause`, `resume` and `kill` act on when the
  // supervisor does not answer (killswitch/direct_control.hpp).
  fs::path cgroup;
  std::string since;      // ISO 8601 UTC
  std::string state;      // starting, running, paused, killed, ended
  std::string mechanism;  // cgroup or process-tree
  fs::path socket;
  fs::path folder;  // the run folder (a workspace is not removed while a run works in it)
};

nlohmann::json to_json(const RunEntry& e);
RunEntry run_entry_from_json(const nlohmann::json& j);

// runtime/runs, created 0700; refuses a directory owned by someone else.
Result<fs::path> runs_dir(const fs::path& runtime_dir);
// Creates `dir` (and parents) 0700 and checks it is ours and private.
Status ensure_private_dir(const fs::path& dir);
// Writes runs/<id>.json atomically, mode 0600.
Status write_entry(const fs::path& runs, const RunEntry& e);
void remove_entry(const fs::path& runs, const std::string& id);

struct ListedRuns {
  std::vector<RunEntry> live;
  std::vector<std::string> cleaned;  // ids of stale entries removed on the way
};
// Every registered run whose supervisor is alive and answers on its socket.
// Entries of dead supervisors (pid gone or socket refusing) are removed.
ListedRuns list_runs(const fs::path& runtime_dir);
// Whether a live run is running as agent `agent` (delete and rewind wait for it).
bool agent_has_live_run(const fs::path& runtime_dir, const std::string& agent);
// The id of a live run working in `folder` or below it, if any (a workspace
// is not removed under it).
std::optional<std::string> live_run_in(const fs::path& runtime_dir, const fs::path& folder);

// "2026-11-29T19:04:33Z"
std::string utc_now_iso();
// Is the process (pid, start time) alive?
bool process_alive(pid_t pid, std::uint64_t start_time);

}  // namespace px::killswitch
