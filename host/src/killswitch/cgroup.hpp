#pragma once
// One cgroup v2 per run, so that double-forked, setsid and daemonised processes
// of the run stay inside it: the kernel puts every new process in its parent's
// cgroup and an agent cannot move itself out (the seal hides cgroupfs and the
// run cannot write any cgroup.procs outside its own subtree).
//
// Where it goes:
//  - as root: <cgroup2 mount>/parallex/<run-id>, with the pids and memory
//    controllers enabled on the way where the kernel offers them;
//  - as a user: a child of our own cgroup when that cgroup is delegated to us
//    (writable, as systemd does for user@UID.service and for scopes started
//    with `systemd-run --user --scope -p Delegate=yes`);
//  - else no cgroup (probe_cgroup says why) and the supervisor falls back to
//    ProcessTracker. PARALLEX_NO_CGROUP=1 forces that fallback.
//
// Placement: the launcher puts the sealed child in the cgroup before it runs
// any code of the agent, either with clone3(CLONE_INTO_CGROUP, cgroup_fd()) or
// by calling enter_cgroup(cgroup_fd()) in the child between fork and exec
// (before unsharing the user namespace). Adding a pid afterwards (add()) is
// only a belt: whatever the child forked before would be outside.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

struct CgroupProbe {
  bool usable = false;
  fs::path mount;       // the cgroup2 mount, empty when none
  fs::path parent;      // where run cgroups are created
  std::string prefix;   // prepended to the run id: "" under .../parallex, "parallex-" when delegated
  std::string how;      // "root: /sys/fs/cgroup/parallex" / "delegated: ..."
  std::string why_not;  // when !usable: a sentence for `parallex check`
};

// Finds the cgroup2 mount in /proc/self/mountinfo (first one), nullopt if none.
std::optional<fs::path> find_cgroup2_mount();
// Where this process may create run cgroups, or why it cannot.
CgroupProbe probe_cgroup();
// True when PARALLEX_NO_CGROUP is set to something other than "" or "0".
bool cgroup_disabled_by_env();

struct CgroupLimits {
  std::optional<std::uint64_t> pids_max = 4096;  // fork bombs end at EAGAIN
  std::optional<std::uint64_t> memory_max;       // bytes; none by default
};

class RunCgroup {
 public:
  // Creates parent/<name> (the name is checked: letters, digits, '-', '_', '.').
  static Result<RunCgroup> create(const CgroupProbe& where, const std::string& name,
                                  const CgroupLimits& limits);

  // A run's cgroup that another process made (the run's supervisor), for
  // `pause`, `resume` and `kill` when that supervisor does not answer
  // (killswitch/direct_control.hpp). This handle never removes it.
  static Result<RunCgroup> existing(const fs::path& path);

  RunCgroup(RunCgroup&&) noexcept = default;
  RunCgroup& operator=(RunCgroup&&) noexcept = default;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  // Kills what is left and removes the directory (best effort).
  ~RunCgroup();

  const fs::path& path() const { return path_; }
  // An O_DIRECTORY fd of the cgroup, for clone3(CLONE_INTO_CGROUP) or enter_cgroup().
  int cgroup_fd() const { return dir_.get(); }
  // Which limits the kernel accepted ("pids.max=4096"), for the run record.
  const std::vector<std::string>& applied_limits() const { return applied_; }

  Status add(pid_t pid);
  std::vector<pid_t> pids() const;
  Result<bool> populated() const;
  Result<bool> frozen() const;

  // Writes cgroup.freeze and waits (polling cgroup.events) until the kernel
  // reports "frozen 1", i.e. every task of the subtree is stopped.
  Status freeze(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  Status thaw(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // cgroup.kill (SIGKILL to every task, frozen ones too), then waits for populated 0.
  Status kill(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // kill() if needed, then rmdir; idempotent.
  Status remove();

 private:
  RunCgroup() = default;
  Result<bool> events_flag(const char* key) const;
  Status wait_events(const char* key, bool value, std::chrono::milliseconds timeout) const;

  fs::path path_;
  UniqueFd dir_;
  // cgroup.events, open for the cgroup's life and polled for POLLPRI (kernfs
  // change notification). Not inotify: closing an inotify fd waits for an SRCU
  // grace period (~15 ms), which every run would pay at its end.
  UniqueFd events_watch_;
  std::vector<std::string> applied_;
  bool removed_ = false;
  bool owned_ = true;  // false: existing(), left as it is when this goes
};

// What a run's cgroup has used so far: CPU time from cpu.stat's usage_usec
// (kept by every cgroup v2) and memory from memory.current (only where the
// memory controller is enabled on the way). Each absent where it cannot be
// read: a listing shows nothing rather than a wrong 0.
struct CgroupUsage {
  std::optional<double> cpu_seconds;
  std::optional<std::uint64_t> memory_bytes;
};
CgroupUsage read_cgroup_usage(const fs::path& cgroup);

// Async-signal-safe: moves the calling process into the cgroup of `cgroup_fd`
// (writes "0" to its cgroup.procs). For the launcher, between fork and exec.
// Returns 0 or -errno.
int enter_cgroup(int cgroup_fd) noexcept;

// True when the task shows the cgroup freezer's trap (state S/D and wchan in
// the signal path), or waits for a vfork child, which the freezer counts as
// frozen. Used by tests and `runs` to check a frozen process.
bool task_is_cgroup_frozen(pid_t pid);

}  // namespace px::killswitch
