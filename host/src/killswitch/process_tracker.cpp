#include "killswitch/process_tracker.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <deque>
#include <thread>

namespace px::killswitch {

Result<std::unique_ptr<ProcessTracker>> ProcessTracker::start() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    return Error::io("prctl(PR_SET_CHILD_SUBREAPER)", errno);
  std::unique_ptr<ProcessTracker> t(new ProcessTracker());
  t->self_ = ::getpid();
  return t;
}

std::unique_ptr<ProcessTracker> ProcessTracker::observe(pid_t supervisor, pid_t root,
                                                        std::uint64_t root_start, pid_t excluded) {
  std::unique_ptr<ProcessTracker> t(new ProcessTracker());
  t->self_ = supervisor;
  if (excluded > 0) t->excluded_.insert(excluded);
  const auto st = read_proc_stat(root);
  t->root_ = root;
  t->root_start_ = root_start;
  // A root gone (or its pid another process's now) is not walked; what was
  // under it came back to the supervisor, which is walked.
  if (st && st->start_time == root_start) t->known_[root] = root_start;
  return t;
}

void ProcessTracker::attach(pid_t root) {
  std::lock_guard lock(mu_);
  root_ = root;
  if (const auto st = read_proc_stat(root)) {
    root_start_ = st->start_time;
    known_[root] = st->start_time;
  }
}

void ProcessTracker::exclude(pid_t pid) {
  std::lock_guard lock(mu_);
  excluded_.insert(pid);
  known_.erase(pid);
}

std::vector<ProcStat> ProcessTracker::scan() {
  std::lock_guard lock(mu_);
  return scan_locked();
}

std::vector<ProcStat> ProcessTracker::scan_locked() {
  std::vector<ProcStat> out;
  if (root_ == 0) return out;
  std::set<pid_t> seen;
  std::deque<pid_t> queue;
  // Roots of the walk: the sealed child, everything seen before (a process
  // whose parent died and that was re-parented stays known), and orphans that
  // came to us as the subreaper after the run started.
  queue.push_back(root_);
  for (const auto& [pid, start] : known_) queue.push_back(pid);
  for (const pid_t child : proc_children(self_))
    if (!excluded_.count(child)) queue.push_back(child);
  std::map<pid_t, std::uint64_t> now;
  while (!queue.empty()) {
    const pid_t pid = queue.front();
    queue.pop_front();
    if (!seen.insert(pid).second) continue;
    auto st = read_proc_stat(pid);
    if (!st) continue;
    // The whole process's state: a main thread that called pthread_exit
    // shows 'Z' while the other threads run on (and would escape pause and
    // kill were it taken for gone).
    st->state = thread_group_state(pid).value_or(st->state);
    const auto k = known_.find(pid);
    if (k != known_.end() && k->second != st->start_time) continue;  // pid reused by a stranger
    if (pid == root_ && root_start_ != 0 && st->start_time != root_start_)
      continue;  // the same, for the root
    if (k == known_.end() && st->ppid == self_ && st->start_time < root_start_)
      continue;  // ours, older than the run
    if (st->state == 'Z' || st->state == 'X') {
      now[pid] = st->start_time;  // keep it known: its children were re-parented, still ours
      continue;
    }
    now[pid] = st->start_time;
    if (pid == root_)
      out.insert(out.begin(), *st);
    else
      out.push_back(*st);
    for (const pid_t child : proc_children(pid)) queue.push_back(child);
  }
  known_ = std::move(now);
  return out;
}

void ProcessTracker::reap_adopted_locked() {
  for (const pid_t child : proc_children(self_)) {
    if (child == root_ || excluded_.count(child) || !known_.count(child)) continue;
    ::waitpid(child, nullptr, WNOHANG);
  }
}

Status ProcessTracker::stop_all(std::chrono::milliseconds timeout) {
  std::lock_guard lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::set<std::pair<pid_t, std::uint64_t>> previous, sent;
  // Held: stopped, or with our SIGSTOP still pending (stop_pending): running
  // and not yet scheduled on a loaded machine, or in the kernel
  // uninterruptibly (D: a sealed process waiting on a seccomp answer from a
  // slow supervisor, a vfork parent). Such a process takes the signal before
  // it runs one more instruction of its own, and cannot fork meanwhile. Only
  // SIGCONT clears it, and a tree whose every process is held runs nothing
  // that could send one; the set is checked stable twice for that.
  const auto held = [&](const ProcStat& p) {
    if (is_stopped_state(p.state)) return true;
    if (!sent.count({p.pid, p.start_time})) return false;
    if (stop_pending(p.pid)) return true;
    // Not pending any more: taken since the walk read its state, or cleared
    // by a SIGCONT. The kernel takes SIGSTOP and stops the thread in one step
    // under the lock that reading the pending set takes, so the state read
    // now, after it, tells which.
    const auto now = thread_group_state(p.pid);
    return now && is_stopped_state(*now);
  };
  // Past the deadline, one round more: on a loaded machine one scan of a big
  // tree can take the whole budget, and the signals it sent have not been
  // looked at yet.
  bool last_round = false;
  for (int round = 0;; ++round) {
    const auto procs = scan_locked();
    std::set<std::pair<pid_t, std::uint64_t>> current;
    std::string running;
    for (const auto& p : procs) {
      current.insert({p.pid, p.start_time});
      if (!held(p)) {
        running += " " + std::to_string(p.pid) + "(" + p.state + ")";
        signal_process(p.pid, p.start_time, SIGSTOP);
        sent.insert({p.pid, p.start_time});
      }
    }
    // Stable: the same set twice in a row, every member held, so none can fork.
    if (running.empty() && current == previous) return ok();
    previous = std::move(current);
    if (last_round && !running.empty())
      return Error::io("stop the run's processes (still running after the timeout:" + running + ")",
                       ETIMEDOUT);
    last_round = std::chrono::steady_clock::now() > deadline;
    if (!running.empty()) std::this_thread::sleep_for(std::chrono::microseconds(round < 20 ? 50 : 500));
  }
}

Status ProcessTracker::continue_all() {
  std::lock_guard lock(mu_);
  for (const auto& p : scan_locked()) signal_process(p.pid, p.start_time, SIGCONT);
  return ok();
}

Status ProcessTracker::kill_all(std::chrono::milliseconds timeout, bool until_gone) {
  std::lock_guard lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool last_round = false;  // past the deadline, one round more, as in stop_all
  for (;;) {
    const auto procs = scan_locked();
    reap_adopted_locked();
    if (procs.empty()) return ok();
    std::size_t left = 0;
    for (const auto& p : procs) {
      if (is_dying(p.pid)) continue;
      ++left;
      signal_process(p.pid, p.start_time, SIGKILL);
    }
    // Gone from /proc is waited for until the deadline (a v1 pids cgroup is
    // removed only once empty); past it, dying is enough: such a process runs
    // nothing of its own again and forks nothing, it only waits for the
    // kernel to tear down its address space, slow for a large one on a
    // loaded machine.
    if (left == 0 && (!until_gone || last_round)) return ok();
    if (last_round)
      return Error::io("kill the run's processes (" + std::to_string(left) + " left after the timeout)",
                       ETIMEDOUT);
    last_round = std::chrono::steady_clock::now() > deadline;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

const char* ProcessTracker::limitations() {
  return "process-tree fallback (no writable cgroup v2): pause stops the tree process by process with "
         "SIGSTOP, repeating until it is stable, so the run goes on for the few milliseconds that takes; "
         "resume continues processes the agent had stopped itself (the process limit is held otherwise: "
         "`parallex check`); and without the run's pid namespace, processes that detached survive a crash "
         "of the supervisor";
}

}  // namespace px::killswitch
