// The run's watchdog on its own: what it holds outlives a normal end (so the
// last close of an inotify instance, which waits for the kernel, is not on
// the path the user waits on) for no longer than the supervisor plus a
// second; and when the supervisor dies, it removes the run's entries. Without
// a cgroup it knows the run is dead from the pid namespace the run's first
// process made (killswitch/run_namespace.hpp).
#include "killswitch/watchdog.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "killswitch/proc.hpp"
#include "killswitch/run_namespace.hpp"

namespace px::killswitch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Waits for end of file on `fd` (every write end closed); how long it took, or -1.
double wait_eof(int fd, int timeout_ms) {
  const auto start = Clock::now();
  char c;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return -1;
    if (::read(fd, &c, 1) == 0) return ms_since(start);
  }
}

TEST(Watchdog, HoldsWhatItIsGivenPastANormalEndAndNoLonger) {
  int held[2];
  ASSERT_EQ(::pipe2(held, O_CLOEXEC), 0);
  const pid_t supervisor = ::fork();
  if (supervisor == 0) {
    // A supervisor: its watchdog holds the write end of `held`, then the run
    // ends normally and the supervisor goes on for 300 ms before it exits.
    ::close(held[0]);
    auto dog = spawn_watchdog(WatchdogSpec{});
    if (!dog || !hand_to_watchdog(dog.value(), held[1])) ::_exit(2);
    ::close(held[1]);
    stop_watchdog(dog.value().pid);
    ::usleep(300'000);
    ::_exit(0);
  }
  ::close(held[1]);
  const auto start = Clock::now();
  // The held end stays open while the supervisor lives...
  const double eof = wait_eof(held[0], 3000);
  int status = 0;
  ::waitpid(supervisor, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_GE(eof, 0) << "the watchdog still holds the descriptor 3 s after a normal end";
  EXPECT_GE(eof, 250) << "the watchdog closed what it holds before the supervisor ended";
  // ... and is closed soon after it (the watchdog sees the supervisor go).
  EXPECT_LT(ms_since(start), 1500);
  ::close(held[0]);
}

int threads_of_this_process() {
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

// A supervisor that goes on with other runs forks again (the next run's seal):
// a thread left to reap a stopped watchdog could hold a lock, the allocator's
// among them, as it forks, and the child would wait for it forever (a test
// process hung that way). No thread is left; the next stop reaps the last.
TEST(Watchdog, StoppingLeavesNoThreadAndTheNextStopReapsTheLastOne) {
  const pid_t supervisor = ::fork();
  if (supervisor == 0) {
    if (threads_of_this_process() != 1) ::_exit(2);
    auto first = spawn_watchdog(WatchdogSpec{});
    if (!first) ::_exit(3);
    const pid_t first_pid = first.value().pid;
    stop_watchdog(first_pid);
    if (threads_of_this_process() != 1) ::_exit(4);
    // It ends within a second of the stop, the supervisor still running.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(first_pid), &info, WEXITED | WNOWAIT) != 0) ::_exit(5);
    auto second = spawn_watchdog(WatchdogSpec{});
    if (!second) ::_exit(6);
    stop_watchdog(second.value().pid);
    if (threads_of_this_process() != 1) ::_exit(7);
    // The first one was reaped by the second stop: no zombie is left behind.
    if (::waitpid(first_pid, nullptr, WNOHANG) != -1 || errno != ECHILD) ::_exit(8);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  // 2: threads before; 4, 7: a thread left after a stop; 8: the first watchdog not reaped.
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Watchdog, RemovesTheRunsEntriesWhenTheSupervisorDies) {
  char templ[] = "/tmp/px-watchdog-test-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const fs::path dir = templ;
  std::ofstream(dir / "run.sock") << "";
  std::ofstream(dir / "run.json") << "{}";
  int held[2];
  ASSERT_EQ(::pipe2(held, O_CLOEXEC), 0);
  const pid_t supervisor = ::fork();
  if (supervisor == 0) {
    ::close(held[0]);
    WatchdogSpec spec;
    spec.unlink = {dir / "run.sock", dir / "run.json"};
    auto dog = spawn_watchdog(spec);
    if (!dog || !hand_to_watchdog(dog.value(), held[1])) ::_exit(2);
    ::pause();  // killed below
    ::_exit(0);
  }
  ::close(held[1]);
  ::usleep(100'000);
  EXPECT_TRUE(fs::exists(dir / "run.json")) << "removed while the supervisor lives";
  ::kill(supervisor, SIGKILL);
  ::waitpid(supervisor, nullptr, 0);
  EXPECT_GE(wait_eof(held[0], 3000), 0) << "the watchdog did not end after the supervisor died";
  EXPECT_FALSE(fs::exists(dir / "run.sock"));
  EXPECT_FALSE(fs::exists(dir / "run.json"));
  ::close(held[0]);
  fs::remove_all(dir);
}

// A first process that makes a pid namespace, as the seal's does, and an
// init in it: the namespace is known once it is made, something runs in it
// while the init lives, and nothing once the init is dead, even while it is a
// zombie nobody reaped.
TEST(RunNamespace, IsKnownOnceMadeAndEmptyOnceItsProcessesAreDead) {
  if (::geteuid() != 0) GTEST_SKIP() << "a pid namespace needs root here (the seal makes one for real runs)";
  int go[2], init_pid[2];
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(init_pid, O_CLOEXEC), 0);
  const pid_t first = ::fork();
  if (first == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1 || ::unshare(CLONE_NEWPID) != 0) ::_exit(1);
    const pid_t init = ::fork();
    if (init == 0) {
      for (;;) ::pause();
    }
    (void)!::write(init_pid[1], &init, sizeof init);
    // The init is killed by the test; this process does not reap it (a
    // zombie left for a reaper) until told to end.
    if (::read(go[0], &c, 1) < 0) ::_exit(1);
    ::_exit(0);
  }
  UniqueFd pidfd(sys_pidfd_open(first, 0));
  ASSERT_TRUE(pidfd);
  EXPECT_FALSE(namespace_made_by(pidfd.get()).known()) << "nothing is made before the unshare";
  ASSERT_EQ(::write(go[1], "u", 1), 1);
  pid_t init = 0;
  ASSERT_EQ(::read(init_pid[0], &init, sizeof init), static_cast<ssize_t>(sizeof init));
  const RunNamespace ns = namespace_made_by(pidfd.get());
  ASSERT_TRUE(ns.known());
  EXPECT_FALSE(nothing_runs_in(ns)) << "the init runs in it";
  ASSERT_EQ(::kill(init, SIGKILL), 0);
  bool empty = false;
  for (int i = 0; i < 200 && !empty; ++i) {
    empty = nothing_runs_in(ns);
    if (!empty) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(empty) << "a dead init, not reaped yet, still counted as running";
  ASSERT_EQ(::write(go[1], "e", 1), 1);
  ASSERT_EQ(::waitpid(first, nullptr, 0), first);
  EXPECT_FALSE(namespace_made_by(pidfd.get()).known()) << "an ended process names no namespace";
  for (int fd : {go[0], go[1], init_pid[0], init_pid[1]}) ::close(fd);
}

}  // namespace
}  // namespace px::killswitch
