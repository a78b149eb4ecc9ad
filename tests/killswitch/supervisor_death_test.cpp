// kill -9 of the supervisor leaves nothing of the run alive, detached
// processes included: with a cgroup the watchdog kills it; in the fallback the
// run's pid namespace dies with its pid 1 (PDEATHSIG from the supervisor).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <sstream>
#include <thread>

#include "killswitch/proc.hpp"
#include "killswitch/run_control.hpp"
#include "tree_helpers.hpp"

namespace px::killswitch {
namespace {

using namespace testing;

struct FakeSupervisor {
  pid_t pid = 0;
  std::string mark;
  fs::path tree_dir;
  std::string cgroup;
};

// Forks a process that acts as a run's supervisor: RunControl, a tree of `n`,
// then it waits forever. The mark and cgroup path come back over a pipe.
FakeSupervisor fork_supervisor(const fs::path& runtime, bool cgroup, bool pidns, int n) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    RunControlOptions o;
    o.run_id = "death-" + std::to_string(::getpid());
    o.runtime_dir = runtime;
    o.use_cgroup = cgroup;
    auto rc = RunControl::start(o);
    if (!rc) ::_exit(2);
    Tree tree = spawn_tree(n, rc.value()->cgroup_fd(), pidns, false);
    if (tree.root <= 0) ::_exit(3);
    if (!rc.value()->attach(tree.root)) ::_exit(4);
    wait_ready(tree, n);
    nlohmann::json st = rc.value()->status();
    const std::string msg = tree.mark + "\n" + tree.dir.string() + "\n" + st.value("cgroup", "") + "\n";
    (void)!::write(p[1], msg.data(), msg.size());
    ::close(p[1]);
    for (;;) ::pause();
  }
  ::close(p[1]);
  std::string text;
  char buf[1024];
  ssize_t r = 0;
  // A minute at the most: a supervisor stuck on its way (its exit status then
  // says nothing) fails the test rather than hanging the suite.
  pollfd ready{p[0], POLLIN, 0};
  while (::poll(&ready, 1, 60'000) == 1 && (r = ::read(p[0], buf, sizeof buf)) > 0)
    text.append(buf, static_cast<std::size_t>(r));
  ::close(p[0]);
  FakeSupervisor s;
  s.pid = pid;
  if (text.empty() && pid > 0) ::kill(pid, SIGKILL);
  std::istringstream in(text);
  std::getline(in, s.mark);
  std::string dir;
  std::getline(in, dir);
  s.tree_dir = dir;
  std::getline(in, s.cgroup);
  return s;
}

void expect_everything_dies(const fs::path& runtime, bool cgroup, bool pidns) {
  FakeSupervisor s = fork_supervisor(runtime, cgroup, pidns, 50);
  if (s.mark.empty()) {
    // Its exit status names the step that failed (2 start, 3 tree, 4 attach).
    int status = 0;
    if (s.pid > 0) ::waitpid(s.pid, &status, 0);
    if (WIFSIGNALED(status)) FAIL() << "the fake supervisor did not start its run in a minute";
    FAIL() << "the fake supervisor failed to start its run (exit status "
           << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << ")";
  }
  const auto before = marked_processes(s.mark);
  ASSERT_GE(before.size(), 50u);
  ASSERT_FALSE(fs::is_empty(runtime / "runs"));
  ::kill(s.pid, SIGKILL);
  ::waitpid(s.pid, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return marked_processes(s.mark).empty(); }, 5000))
      << marked_processes(s.mark).size() << " processes of the run outlived its supervisor";
  if (cgroup) {
    EXPECT_TRUE(wait_until([&] { return !fs::exists(s.cgroup); }, 3000)) << s.cgroup << " was not removed";
  }
  // The watchdog removes the socket and the entry with or without a cgroup
  // (and the test's clean-up must not race it).
  EXPECT_TRUE(wait_until([&] { return fs::is_empty(runtime / "runs"); }, 3000)) << "registry entry left";
  fs::remove_all(s.tree_dir);
}

TEST(SupervisorDeath, CgroupRunDiesWithDetachedChildren) {
  if (!probe_cgroup().usable) GTEST_SKIP() << probe_cgroup().why_not;
  const fs::path runtime = fs::temp_directory_path() / ("px-death-cg-" + std::to_string(::getpid()));
  expect_everything_dies(runtime, true, false);
  fs::remove_all(runtime);
}

TEST(SupervisorDeath, FallbackRunInPidNamespaceDiesWithDetachedChildren) {
  if (::geteuid() != 0) GTEST_SKIP() << "a pid namespace needs root here (the seal makes one for real runs)";
  const fs::path runtime = fs::temp_directory_path() / ("px-death-fb-" + std::to_string(::getpid()));
  expect_everything_dies(runtime, false, true);
  fs::remove_all(runtime);
}

TEST(SupervisorDeath, FallbackPausesATreeInAPidNamespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "a pid namespace needs root here";
  const fs::path runtime = fs::temp_directory_path() / ("px-pidns-" + std::to_string(::getpid()));
  RunControlOptions o;
  o.run_id = "pidns-pause";
  o.runtime_dir = runtime;
  o.use_cgroup = false;
  auto rc = RunControl::start(o);
  ASSERT_TRUE(rc) << rc.error().message;
  Tree tree = spawn_tree(200, -1, true, false);
  ASSERT_TRUE(rc.value()->attach(tree.root));
  ASSERT_TRUE(wait_ready(tree, 200));
  ASSERT_TRUE(rc.value()->pause("test"));
  for (const pid_t p : marked_processes(tree.mark)) {
    const auto st = read_proc_stat(p);
    if (st) {
      EXPECT_TRUE(stopped_or_stop_pending(p)) << "pid " << p << " state " << st->state;
    }
  }
  ASSERT_TRUE(rc.value()->resume("test"));
  ASSERT_TRUE(rc.value()->kill("test"));
  EXPECT_TRUE(wait_until([&] { return marked_processes(tree.mark).empty(); }, 3000));
  reap(tree.root);
  rc.value()->finish();
  fs::remove_all(tree.dir);
  fs::remove_all(runtime);
}

}  // namespace
}  // namespace px::killswitch
