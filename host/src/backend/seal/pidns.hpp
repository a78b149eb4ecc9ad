#pragma once
// Pid namespace: the seal's pid 1 is a small init of ours that reaps orphans,
// forwards SIGTERM/SIGHUP to the command, and takes every process of the run
// down with it when the command ends or the supervisor dies.
#include <sys/types.h>

#include <functional>

#include "common/error.hpp"

namespace px::seal::pidns {

// PR_SET_PDEATHSIG(SIGKILL), then closes the race with a parent that died
// before the prctl: `parent_pipe` is the read end of a pipe whose write end
// only the parent holds (EOF = the parent is gone).
Status die_with_parent(int parent_pipe);

// A fresh procfs for this pid namespace at `view_root`/proc (through fds).
Status mount_proc(int view_root);
// Where no procfs of the run's own can be mounted (a container that masks
// parts of its /proc: the kernel refuses a procfs showing more), the
// container's /proc with its masks, bound recursively onto <view>/proc: the
// run sees the container's processes there (Landlock keeps them out of its
// reach), so only with a weaker seal accepted.
Status bind_outer_proc(int view_root);

// Init's loop: reaps every child until `command` exits; returns its raw wait
// status (exit_code() turns it into an exit code). With a `channel`, calls
// `serve` whenever it is readable meanwhile, until `serve` returns false.
int reap_until_status(pid_t command, int channel = -1, const std::function<bool()>& serve = {});

// An exit code from a wait status.
int exit_code(int status);

}  // namespace px::seal::pidns
