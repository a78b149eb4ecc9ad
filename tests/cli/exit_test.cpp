// A command's exit: the address space is freed by a process that shares it
// and dies with the command (common/exit_fast.hpp). The caller gets the
// status and all of the output, and nothing of that process outlives it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "cli_support.hpp"
#include "test_paths.hpp"

namespace {

using namespace px::cli_test;

// In a child of the test (which becomes the subreaper the command's orphans
// go to): runs `parallex ARG`, reads its output to the end, reaps it, then
// reaps what it left. Exit codes name the step that failed.
int run_and_reap_orphans(const char* arg, const std::string& home) {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 10;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return 11;
  const pid_t px = ::fork();
  if (px < 0) return 12;
  if (px == 0) {
    ::dup2(out[1], 1);
    ::setenv("PARALLEX_HOME", home.c_str(), 1);
    ::setenv("XDG_RUNTIME_DIR", home.c_str(), 1);
    ::execl(PARALLEX_EXE, PARALLEX_EXE, arg, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) text.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  if (::waitpid(px, &status, 0) != px || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 13;
  if (text.empty()) return 14;
  // The holder: one orphan, ended with its parent, promptly: killed by
  // SIGKILL, or exited 0 when its parent was gone before it could ask.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int orphans = 0;
  for (;;) {
    const pid_t r = ::waitpid(-1, &status, WNOHANG);
    if (r > 0) {
      ++orphans;
      const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
      const bool left = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!killed && !left) return 15;
      continue;
    }
    if (r < 0 && errno == ECHILD) break;  // nothing of it is left
    if (std::chrono::steady_clock::now() > deadline) return 16;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return orphans <= 1 ? 0 : 17;
}

TEST(Exit, TheCallerGetsTheStatusAndOutputAndNothingOfParallexOutlivesIt) {
  Folder home;
  for (const char* arg : {"--version", "runs"}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) ::_exit(run_and_reap_orphans(arg, home.path.string()));
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << arg;
    EXPECT_EQ(WEXITSTATUS(status), 0)
        << "parallex " << arg << ": step " << WEXITSTATUS(status)
        << " failed (10 subreaper, 11 pipe, 12 fork, 13 exit status, 14 no output, 15 an orphan that "
           "failed, 16 an orphan still running after 5 s, 17 more than one orphan)";
  }
}

}  // namespace
