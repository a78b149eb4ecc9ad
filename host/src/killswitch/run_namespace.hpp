#pragma once
// The pid namespace a run's first process makes, as the run's watchdog sees
// it: taken from that process while it lives, and whether anything still
// runs in it. For a run without a cgroup this is how the watchdog knows that
// every process of the run is dead after a supervisor's death, before it
// sweeps (killswitch/watchdog.hpp). Syscalls only, no allocation, no locks:
// the watchdog is a forked child of a multi-threaded process.
#include <sys/types.h>

namespace px::killswitch {

struct RunNamespace {
  dev_t dev = 0;
  ino_t ino = 0;
  bool known() const { return ino != 0; }
};

// The pid namespace the process behind `pidfd` makes for its children, once
// it differs from ours (the process has unshared it), read while that process
// lives (so a pid reused by another process names nothing). Unknown before.
RunNamespace namespace_made_by(int pidfd);

// Whether no process is left running in `ns`, read from /proc. A zombie does
// not count: it still names its namespace until whoever adopted it reaps it
// (the namespace's init, once its parent died, waits for a reaper outside),
// but it runs nothing any more.
bool nothing_runs_in(const RunNamespace& ns);

}  // namespace px::killswitch
