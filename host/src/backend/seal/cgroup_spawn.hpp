#pragma once
// Starts a process directly inside a cgroup (clone3 CLONE_INTO_CGROUP).
// Moving a running process into a cgroup makes the kernel wait for an RCU
// grace period (about 20 ms on the development VM, half of a sealed run's
// start-up); a process born there costs nothing extra.
#include <sys/types.h>

#include <functional>

namespace px::seal {

// Runs `child` in a new process born in the cgroup `cgroup_fd`, a child of the
// caller like one from fork(). glibc has no clone3 wrapper and a raw clone3
// is only safe in a single-threaded process, so a forked helper makes it with
// CLONE_PARENT and exits. `child` must not return.
// Returns the pid; 0 when the kernel cannot (no clone3 or CLONE_INTO_CGROUP:
// the caller forks and enters the cgroup itself); -1 with errno on failure.
// `helper` gets the helper's pid, still exiting: its exit unmaps a copy of the
// caller's address space (0.2-0.4 ms), so the caller reaps it later, when
// nothing waits on it (waitpid).
pid_t spawn_in_cgroup(int cgroup_fd, const std::function<void()>& child, pid_t& helper);

}  // namespace px::seal
