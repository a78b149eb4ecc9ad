#pragma once
// RunRecord: run.json, the one record of a run. The supervisor writes it
// (first when the run starts, then when it ends); reports, `runs`, the MCP
// server and workspaces read it through from_json. Schema 2 adds `schema`,
// `status`, typed notices and refusals; records written before (no `schema`)
// still read.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "run/notice.hpp"
#include "run/record_parts.hpp"
#include "run/status.hpp"

namespace px::run {

namespace fs = std::filesystem;

// Requests the run's proxy refused, one entry per host, port and reason.
struct RefusedRequest {
  std::string host;  // as the client named it (a name, or an IP literal), never a URL
  std::uint16_t port = 0;
  std::string reason;  // a proxy reason constant (blocked-by-allowlist, ip-literal-refused, ...)
  std::uint64_t count = 0;
  bool dns = false;  // refused by the run's own DNS: the name was asked, never looked up
};

// What the seal refused while the run went on, as its backend collected it
// (backend::Refusals): distinct (source, call, process) with a count.
struct SealRefusal {
  std::string source;   // "seccomp", "landlock"
  std::string call;     // "unshare CLONE_NEWUSER" (redacted)
  std::string process;  // the process's name (redacted)
  std::uint64_t count = 0;
};
struct SealRefusals {
  std::vector<std::string> collected_from;  // "seccomp (user notification)"
  std::vector<std::string> not_collected;   // what was not recorded, and why
  std::vector<SealRefusal> refused;
  std::uint64_t more = 0;  // refusals past the cap of distinct ones
};

// The process limit of a sealed run: the limit, and what held it (the run's
// pids cgroup, RLIMIT_NPROC, the pid namespace's pid_max); nothing held it
// under a weaker seal that could not.
struct ProcessLimitHold {
  std::string id, description;
};
struct RunLimits {
  std::uint64_t processes = 0;
  std::vector<ProcessLimitHold> held_by;
};

// A decoy credential touched during the run (supervisor/decoys.hpp).
struct DecoyHit {
  fs::path path;
  std::string event;    // "open", "read", "moved", "deleted"
  pid_t pid = 0;        // 0: unknown (inotify)
  std::string process;  // "cat (pid 1234): cat /home/a/.config/aws/credentials", or empty
  std::string at;       // ISO 8601 UTC
};
// How the decoys were watched: by which means and how many, or why they were not.
struct DecoyWatchState {
  std::string method;  // "fanotify" or "inotify"; empty when not watched
  std::size_t watched = 0;
  std::string error;  // why they were not watched (redacted), or empty
};

// A variable passed on purpose: its name and where from, never its value.
struct PassedVariable {
  std::string name;
  std::string from;  // "the caller's environment", "a value given"
  bool passed = false;
  std::string origin;  // the rule that passed it
};

nlohmann::json to_json(const SealRefusals& r);
nlohmann::json to_json(const RunLimits& l);
nlohmann::json to_json(const PassedVariable& v);
nlohmann::json to_json(const DecoyHit& hit);

struct WorkspaceRef {
  std::string name, branch, base, base_commit;
  fs::path path, project;
};

// The seal's level for this run.
enum class SealLevel { full, weaker, none };
const char* to_string(SealLevel level);

struct RunRecord {
  static constexpr int kSchema = 2;
  int schema = kSchema;

  std::string id;
  std::string agent;              // empty for ad-hoc runs
  std::string command;            // argv joined, redacted
  std::vector<std::string> argv;  // redacted
  std::string harness;
  fs::path run_folder;
  SealLevel seal = SealLevel::full;
  std::string network;               // offline | allowlist | online
  std::vector<std::string> options;  // the run options given on the command line
  std::string policy_digest;
  nlohmann::json policy = nlohmann::json::object();  // policy::to_json, for reports

  std::string started_at;               // ISO 8601 UTC, milliseconds
  std::optional<std::string> ended_at;  // absent while the run goes on
  bool end_known = true;                // false: closed afterwards from the last trace of a lost run
  RunStatus status = RunStatus::starting;
  std::optional<int> exit_code;    // the command's own exit code (when it exited)
  std::optional<int> signal;       // the signal that ended the command, or the supervisor
  std::optional<int> exit_status;  // what the run command exited with (status table)
  std::string setup_error;         // why the run could not start (redacted)

  fs::path proxy_log;  // empty when the run was offline
  std::vector<Notice> notices;
  std::vector<RefusedRequest> refused;        // every request the proxy refused
  std::optional<SealRefusals> seal_refusals;  // absent when the command never started
  std::optional<DecoyWatchState> decoys;      // runs with decoys only
  std::vector<DecoyHit> decoy_hits;
  std::optional<KillSwitchRecord> kill_switch;  // null in the file when the run had none
  std::optional<RunLimits> limits;              // sealed runs only
  std::optional<NetworkLive> network_live;      // ask mode and live rules; absent when neither was used
  std::optional<OpenRequests> open_requests;    // pages the run asked to open; absent when none
  std::optional<BrokerRecord> broker;           // the run's credential broker; absent when it had none
  std::optional<fs::path> git_repository_created;
  // Files other programs run later that the run made, and what it left in
  // .git that would make git run a program: moved aside (protect/quarantine.hpp).
  std::vector<Quarantined> quarantined;
  // Changes the run made to a harness's command-running settings in the
  // user's home, held back until `parallex runs apply` (protect/home_settings.hpp),
  // and the data keys that landed beside them.
  std::vector<HeldChange> home_changes;
  // Variables passed on purpose (--env, a profile's environment.pass, an
  // agent's env): names and where from, never values.
  std::vector<PassedVariable> env_passed;

  // The supervisor that writes this record, to tell a live run from a lost one.
  pid_t supervisor_pid = 0;
  std::uint64_t supervisor_start = 0;  // its start time in clock ticks since boot (/proc/PID/stat)

  // Agent runs in a git repository: refs before and after, and the snapshot taken first.
  std::string repository;
  std::optional<GitRefs> refs_start, refs_end;
  std::string head_start, head_end;
  std::string snapshot;
  // Workspaced runs.
  std::optional<WorkspaceRef> workspace;
  // The workspace's uncommitted changes at the end, as `git status --short` lines.
  std::optional<std::vector<std::string>> changed_files;

  nlohmann::json to_json() const;
  // to_json() but for `policy`, which is most of a record (about 30 KB).
  nlohmann::json to_json_without_policy() const;
  // Reads schema 2 and the records written before it; anything else is an error naming the field.
  static Result<RunRecord> from_json(const nlohmann::json& j);
};

// Reads DIR/run.json.
Result<RunRecord> read_record(const fs::path& run_dir);
// Whether DIR/run.json certainly says the run ended, read from its first
// few KB only (write_record() puts `ended_at` near the top and the policy
// last): for listings of thousands of records, which need to read in full
// only the ones that may still be open. False when unsure.
bool record_ended(const fs::path& run_dir);
// Writes DIR/run.json through a temp file and a rename (mode 0600). A run's
// supervisor writes its record three times with the same policy: it passes
// that policy once dumped (policy_text()) and `record.policy` is not written.
Status write_record(const fs::path& run_dir, const RunRecord& record, std::string_view policy_text = {});
// Room for the record's last write, taken when its first is made (before the
// command starts): DIR/.reserve, `bytes` allocated on the state folder's
// filesystem. A full filesystem is refused here, with the reason and the fix,
// rather than losing the outcome of a run that ran. release_record_space()
// gives the room back just before the last write.
Status reserve_record_space(const fs::path& run_dir, std::size_t bytes);
// The error of a run refused for want of room for its record (`bytes`).
Error state_folder_full(const fs::path& run_dir, std::size_t bytes);
void release_record_space(const fs::path& run_dir);
// The record cut to what says how the run ended (no policy, the first
// notices, no quarantined contents), for when the whole one does not fit.
Status write_outcome_only(const fs::path& run_dir, const RunRecord& record);

// A new run's record folder is made with its id (run/record_dir.hpp).
// `policy` as write_record() writes it.
std::string policy_text(const nlohmann::json& policy);

// Reads DIR/run.json, lets `change` change it, and writes it back when
// `change` says so, holding an flock on DIR meanwhile: for the writers that
// may meet after a supervisor's death (the watchdog's sweep adding what it
// moved, `parallex runs` closing the record as lost), so neither loses the
// other's change. Returns whether it was written.
Result<bool> update_record(const fs::path& run_dir, const std::function<bool(RunRecord&)>& change);

// Whether the supervisor named in the record is still alive (same pid, same start).
bool supervisor_alive(const RunRecord& record);
// The start time of `pid` in clock ticks since boot, 0 when unknown.
std::uint64_t process_start_ticks(pid_t pid);
// Whether `pid` is still the process that started at `start` and has not
// ended: a zombie has (it runs nothing, it only waits for its parent, or for
// whoever adopted it, to reap it).
bool process_running(pid_t pid, std::uint64_t start);

// A record left without an end by a supervisor that died (SIGKILL, a crash):
// marks it lost, ends it at the last trace it left (the newest file of its
// folder) with end_known false, and writes it back. Live or finished runs are
// left alone. Returns whether the record was closed.
bool close_if_lost(const fs::path& run_dir, RunRecord& record);

}  // namespace px::run
