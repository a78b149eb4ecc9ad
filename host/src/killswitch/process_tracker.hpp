#pragma once
// The fallback where no writable cgroup v2 exists: the supervisor becomes a
// child subreaper and tracks the run's tree by walking /proc/<pid>/task/*/children
// from the sealed child. Inside the run's pid namespace every process descends
// from the sealed child (pid 1 there adopts orphans), and outside one the
// orphans of a double fork or a setsid daemon come back to us as the subreaper,
// so the walk sees them too.
//
// What it cannot catch (also in limitations()):
//  - pause is not atomic: SIGSTOP goes out process by process, so the tree runs
//    for the few milliseconds of the walk; the walk repeats until it finds no
//    new process and every one is stopped, and a fork racing with SIGSTOP is
//    restarted by the kernel, so none is missed once it converges;
//  - resume sends SIGCONT to all, so a process the agent had stopped itself
//    (job control) resumes too;
//  - without a pid namespace, an orphan of the run is attributed to it because
//    it became a child of this process after the run started: helpers the
//    supervisor forks itself must be excluded (exclude());
//  - no resource limits (pids.max / memory.max need a cgroup);
//  - when the supervisor dies, only the pid namespace (PDEATHSIG on its pid 1)
//    ends the run: without one, detached processes survive.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "common/error.hpp"
#include "killswitch/proc.hpp"

namespace px::killswitch {

class ProcessTracker {
 public:
  // Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER).
  static Result<std::unique_ptr<ProcessTracker>> start();

  // Another process's run, for `pause`, `resume` and `kill` when its
  // supervisor does not answer (killswitch/direct_control.hpp): the tree
  // from `root` when it is still the process that started at `root_start`,
  // and the orphans that came back to `supervisor` (not `excluded`, its
  // watchdog). This process does not become a subreaper.
  static std::unique_ptr<ProcessTracker> observe(pid_t supervisor, pid_t root, std::uint64_t root_start,
                                                 pid_t excluded);

  // The sealed child: the root of the tracked tree.
  void attach(pid_t root);
  // A child of the supervisor that is not part of the run (e.g. the watchdog).
  void exclude(pid_t pid);
  pid_t root() const { return root_; }

  // The run's live processes now (zombies left out), root first.
  std::vector<ProcStat> scan();
  // Every tracked process SIGSTOPped, until each is seen stopped or with the
  // signal pending, twice in a row with the same processes. Past `timeout`,
  // one round more looks at what the last signals did before it gives up.
  Status stop_all(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  Status continue_all();
  // SIGKILL until nothing of the tree is left; reaps adopted orphans (never the
  // root, which the supervisor waits for). `until_gone` false: done once every
  // process is dying (is_dying), without waiting for the kernel to remove them.
  Status kill_all(std::chrono::milliseconds timeout = std::chrono::seconds(5), bool until_gone = true);

  static const char* limitations();

 private:
  ProcessTracker() = default;
  std::vector<ProcStat> scan_locked();
  void reap_adopted_locked();

  std::mutex mu_;
  pid_t self_ = 0;
  pid_t root_ = 0;
  std::uint64_t root_start_ = 0;
  std::map<pid_t, std::uint64_t> known_;  // pid -> start time, every process seen
  std::set<pid_t> excluded_;
};

}  // namespace px::killswitch
