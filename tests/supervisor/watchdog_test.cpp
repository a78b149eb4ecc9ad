// The run's watchdog on its own: what it holds outlives a normal end (so the
// last close of an inotify instance, which waits for the kernel, is not on
// the path the user waits on) for no longer than the supervisor plus a
// second; and when the supervisor dies, it removes the run's entries.
#include "supervisor/watchdog.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace px::supervisor {
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

}  // namespace
}  // namespace px::supervisor
