// The run's terminal: `parallex run` started on a real pty (openpty here, as
// a terminal emulator would) gives the command that terminal under a name it
// can find (ttyname, `tty`), while the run's own ptys still come from its own
// devpts instance.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmp.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string output;  // what the terminal showed
};

// Runs `parallex run -- /bin/sh -c SCRIPT` as the session leader of a new
// pty (its controlling terminal, fds 0-2), and reads the pty until it closes.
Ran run_on_a_pty(const std::string& script, const fs::path& root) {
  Ran r;
  int master = -1, slave = -1;
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return r;
  const std::vector<std::string> env{"HOME=" + (root / "home").string(),
                                     "PATH=/usr/local/bin:/usr/bin:/bin",
                                     "LANG=C.UTF-8",
                                     "TERM=dumb",
                                     "PARALLEX_HOME=" + (root / "data").string(),
                                     "XDG_RUNTIME_DIR=" + (root / "runtime").string()};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(master);
    if (::login_tty(slave) != 0) ::_exit(121);
    if (::chdir((root / "work").c_str()) != 0) ::_exit(120);
    std::vector<std::string> argv{PARALLEX_EXE, "run", "--", "/bin/sh", "-c", script};
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    std::vector<std::string> env_copy = env;
    for (auto& s : env_copy) e.push_back(s.data());
    e.push_back(nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  ::close(slave);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) {
      if (::waitpid(pid, &r.status, WNOHANG) == pid) break;
      continue;
    }
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: every holder of the slave closed it
    r.output.append(buf, static_cast<std::size_t>(n));
  }
  if (r.status == -1) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &r.status, 0);
  }
  ::close(master);
  r.status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 1000 + WTERMSIG(r.status);
  return r;
}

class RunTerminal : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "run-tty-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "data", "runtime", "work"}) fs::create_directories(root_ / d);
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(root_, ec);
  }
  fs::path root_;
};

TEST_F(RunTerminal, TheCommandsTerminalHasANameInsideTheRun) {
  // `tty` names it; the name is the terminal the run holds (same device as
  // fd 0); stty reads it; and a pty the run opens itself comes from its own
  // devpts (script(1) inside prints the inner pty's name).
  const std::string script =
      "echo \"tty=$(tty)\"; "
      "if [ \"$(tty)\" -ef /proc/self/fd/0 ]; then echo same=yes; else echo same=no; fi; "
      "stty size >/dev/null 2>&1 && echo stty=ok; "
      "if command -v script >/dev/null; then echo \"inner=$(script -qc tty /dev/null | tr -d '\\r')\"; fi";
  const Ran r = run_on_a_pty(script, root_);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("tty=/dev/console"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not a tty"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("same=yes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stty=ok"), std::string::npos) << r.output;
  if (r.output.find("inner=") != std::string::npos) {
    EXPECT_NE(r.output.find("inner=/dev/pts/0"), std::string::npos) << r.output;
  }
}

TEST_F(RunTerminal, WithoutATerminalThereIsNoConsole) {
  const std::string out = root_ / "out.txt";
  const std::string cmd =
      "cd '" + (root_ / "work").string() + "' && env -i HOME='" + (root_ / "home").string() +
      "' PATH=/usr/bin:/bin PARALLEX_HOME='" + (root_ / "data").string() + "' XDG_RUNTIME_DIR='" +
      (root_ / "runtime").string() + "' " + PARALLEX_EXE +
      " run -- /bin/sh -c 'tty; test -e /dev/console && echo console=yes || echo console=no' "
      "</dev/null >'" +
      out + "' 2>&1";
  ASSERT_NE(std::system(cmd.c_str()), -1);
  std::string text;
  if (FILE* f = std::fopen(out.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  EXPECT_NE(text.find("not a tty"), std::string::npos) << text;
  EXPECT_NE(text.find("console=no"), std::string::npos) << text;
}

}  // namespace
