#pragma once
// Death of the supervisor ends the run. Two mechanisms, so that `kill -9` of
// the supervisor leaves nothing of the run alive:
//  1. the launcher gives the sealed child (pid 1 of the run's pid namespace)
//     PR_SET_PDEATHSIG(SIGKILL); when pid 1 of a pid namespace dies the kernel
//     kills every process in that namespace, detached or not. (PDEATHSIG fires
//     when the *thread* that forked the child exits: launch from the thread
//     that waits for the run.)
//  2. a watchdog process forked by the supervisor at start: it waits on a pidfd
//     of the supervisor, and when the supervisor is gone it writes cgroup.kill
//     for the run's cgroup, removes the cgroup, and removes the run's socket
//     and registry entry. It leaves the terminal's session (setsid), so Ctrl-C
//     or a hang-up of the terminal does not take it down first, and holds no
//     fd of the supervisor's but the four it needs (the pidfd, its channel,
//     the cgroup, the executable) and those handed to it.
//  3. once the run's processes are dead (its cgroup empty; without one, the
//     run's first process gone and nothing left running in the pid namespace
//     it made), the watchdog moves aside
//     what the run left at the protected paths, as the supervisor's end of the
//     run would have: when it was handed the quarantine's state
//     (hand_sweep_to_watchdog), it execs the supervisor's own executable for
//     that (protect/sweep_after_death.hpp). Exec, not the code in this
//     forked child: the sweep allocates and takes locks, which a child of a
//     multi-threaded process may not (a lock another thread held at the fork
//     stays held here for ever).
// Without a cgroup and without a pid namespace (the unsealed fallback) neither
// reaches detached processes; that case is documented as a limitation.
//
// The watchdog also holds, until it ends, descriptors handed to it
// (hand_to_watchdog) whose last close waits for the kernel: closing an inotify
// or fanotify instance waits for an SRCU grace period (0–25 ms on the
// development VM). Held here, that close happens in the watchdog after the
// supervisor is gone, not on the path the user waits on.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::killswitch {

struct WatchdogSpec {
  int cgroup_fd = -1;                         // the run's cgroup, or -1
  std::filesystem::path cgroup_path;          // removed after the kill
  std::vector<std::filesystem::path> unlink;  // socket and registry entry
  // Folders removed once the run's processes are dead: its cgroup in the v1
  // pids hierarchy (killswitch/pids_limit.hpp).
  std::vector<std::filesystem::path> rmdir;
};

struct Watchdog {
  pid_t pid = 0;
  UniqueFd channel;  // hand_to_watchdog() sends descriptors over it
};

// Forks the watchdog.
Result<Watchdog> spawn_watchdog(const WatchdogSpec& spec);
// Hands the watchdog a copy of `fd`, which it holds until it ends. False when
// it could not (the caller's close is then the last).
bool hand_to_watchdog(const Watchdog& watchdog, int fd);
// Hands the watchdog what it needs to sweep after the supervisor's death:
// `state_fd` (a memfd holding Quarantine::state()) and the run folder's
// descriptor. A later call replaces what an earlier one handed.
bool hand_sweep_to_watchdog(const Watchdog& watchdog, int state_fd, int run_dir_fd);
// Hands the watchdog the runs-private folder (run/private_dir.hpp): once the
// run is dead after its supervisor's death, the sweep it execs removes the
// private dirs no live run holds, this run's among them.
bool hand_private_dirs_to_watchdog(const Watchdog& watchdog, int dir_fd);
// Hands the watchdog a pidfd of the run's first process, for a run without a
// cgroup. The watchdog takes from it the pid namespace that process makes as
// it starts (it looks every 5 ms, two seconds at the most), and sweeps only
// once the process has ended and no process is left running in that
// namespace.
bool hand_first_process_to_watchdog(const Watchdog& watchdog, int pidfd);
// The supervisor ends normally: tells the watchdog (SIGTERM), which then only
// waits for the supervisor's exit (a second at the most) and ends, doing
// nothing to the run. Its exit (the last close of what it holds) is not
// waited for, and no thread is left to wait: it is reaped by a later call
// (of a supervisor that goes on with other runs) or by init.
void stop_watchdog(pid_t pid);

}  // namespace px::killswitch
