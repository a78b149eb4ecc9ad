#pragma once
// Real process trees for the kill-switch tests: a shell that starts N
// processes, among them setsid daemons, a double fork and a busy loop, every
// one marked in its environment so the test can find them all in /proc
// without trusting the mechanism under test.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "wait.hpp"

namespace px::killswitch::testing {

using px::test::wait_until;

namespace fs = std::filesystem;

struct Tree {
  pid_t root = 0;
  std::string mark;  // PX_TREE_MARK=<mark> in every process of the tree
  fs::path dir;      // the tree's files: ready, alive
};

// Forks the tree's root (a /bin/sh) with PDEATHSIG(SIGKILL); `cgroup_fd` >= 0
// puts the child in that cgroup before exec. `new_pidns` makes the root pid 1
// of a new pid namespace (needs root). Returns once `n` processes exist.
Tree spawn_tree(int n, int cgroup_fd, bool new_pidns = false, bool wait_ready = true);
// Waits until the tree said ready and `n` marked processes exist.
bool wait_ready(const Tree& t, int n);
// Gone, a zombie, or exiting (it has left its cgroup already): a check that
// raced with the end of a short-lived process of the tree asks this.
bool ended_or_ending(pid_t pid);
// Held by SIGSTOP, as the process-tree fallback's pause counts it
// (ProcessTracker::stop_all): stopped, or with SIGSTOP pending, which it takes
// before it runs one more instruction of its own: running and not yet
// scheduled on a loaded machine, or in the kernel uninterruptibly (D). A vfork
// parent (dash runs `sleep` so) whose child was stopped before its exec stays
// in D until the child goes on: until the resume.
bool stopped_or_stop_pending(pid_t pid);
// Every live (non-zombie) process whose environment holds the tree's mark.
std::vector<pid_t> marked_processes(const std::string& mark);
// Size of the tree's "alive" file (appended to by a setsid daemon every 20 ms).
std::uintmax_t alive_size(const Tree& t);
// Reaps the root if it has exited (no hang).
void reap(pid_t pid);

}  // namespace px::killswitch::testing
