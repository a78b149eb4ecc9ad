// The control channel: protocol, stale sockets, and refusal of requests that
// come from inside a run (PARALLEX_RUN=1, another pid namespace, a run's cgroup).
#include "killswitch/control_socket.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/unique_fd.hpp"
#include "killswitch/kill_switch_client.hpp"
#include "killswitch/proc.hpp"
#include "killswitch/registry.hpp"
#include "killswitch/run_control.hpp"
#include "test_paths.hpp"

namespace px::killswitch {
namespace {

// The test binary doubles as the client: with PX_TEST_HELPER set it sends one
// request before gtest starts and prints the outcome.
//   request:<op>:<socket>   raw request, no client-side check
//   pause-all:<runtime>     the CLI's path (client-side check included)
struct Helper {
  Helper() {
    const char* mode = std::getenv("PX_TEST_HELPER");
    if (!mode) return;
    const std::string m = mode;
    if (m.rfind("request:", 0) == 0) {
      const auto colon = m.find(':', 8);
      const std::string op = m.substr(8, colon - 8), sock = m.substr(colon + 1);
      auto r = send_request(sock, {{"v", 1}, {"op", op}});
      std::printf("%s\n", r ? r.value().dump().c_str() : ("ERROR " + r.error().message).c_str());
    } else if (m.rfind("pause-all:", 0) == 0) {
      auto r = pause_runs(m.substr(10), {true, ""});
      std::printf("%s\n", r ? "OK" : ("ERROR " + r.error().message).c_str());
    }
    std::fflush(stdout);
    ::_exit(0);
  }
} helper;

struct Spawned {
  int status = -1;
  std::string out;
};

// Runs this binary as a helper; `how`: 0 plain, 1 new pid namespace, 2 in cgroup `cgroup_fd`.
Spawned run_helper(const std::string& mode, bool parallex_run, int how = 0, int cgroup_fd = -1) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {};
  std::string self(4096, '\0');
  self.resize(
      static_cast<std::size_t>(std::max<ssize_t>(0, ::readlink("/proc/self/exe", self.data(), self.size()))));
  const std::string env_mode = "PX_TEST_HELPER=" + mode;
  std::vector<std::string> env = {env_mode, "PATH=/usr/bin:/bin"};
  if (const char* x = std::getenv("XDG_RUNTIME_DIR")) env.push_back(std::string("XDG_RUNTIME_DIR=") + x);
  if (parallex_run) env.push_back("PARALLEX_RUN=1");
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (how == 1) {
    const unsigned long flags = CLONE_NEWPID | (::geteuid() == 0 ? 0 : CLONE_NEWUSER);
    pid = static_cast<pid_t>(::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  } else {
    pid = ::fork();
  }
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    if (how == 2 && enter_cgroup(cgroup_fd) != 0) ::_exit(3);
    char* const argv[] = {self.data(), nullptr};
    ::execve(self.c_str(), argv, envp.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  Spawned s;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) s.out.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  if (pid > 0) ::waitpid(pid, &s.status, 0);
  return s;
}

class ControlSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime =
        fs::temp_directory_path() / ("px-cs-" + std::to_string(::getpid()) + "-" + std::to_string(++serial));
  }
  void TearDown() override { fs::remove_all(runtime); }
  std::unique_ptr<RunControl> start(const std::string& id, bool cgroup) {
    RunControlOptions o;
    o.run_id = id;
    o.runtime_dir = runtime;
    o.use_cgroup = cgroup;
    auto rc = RunControl::start(o);
    EXPECT_TRUE(rc) << (rc ? "" : rc.error().message);
    return rc ? std::move(rc).value() : nullptr;
  }
  fs::path runtime;
  static inline int serial = 0;
};

TEST(ControlPeer, RunCgroupPaths) {
  EXPECT_TRUE(is_run_cgroup_path("/parallex/20261129-1"));
  EXPECT_TRUE(is_run_cgroup_path(
      "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope/parallex-20261129"));
  EXPECT_FALSE(is_run_cgroup_path("/parallex"));
  EXPECT_FALSE(is_run_cgroup_path("/user.slice/user-1000.slice/session-2.scope"));
  EXPECT_FALSE(is_run_cgroup_path("/"));
}

TEST(ControlPeer, OurOwnProcessIsAllowed) {
  if (client_inside_run_reason()) GTEST_SKIP() << "the test itself runs inside a Parallex run";
  EXPECT_FALSE(refuse_reason_for_peer(::getpid(), ::geteuid()));
  EXPECT_TRUE(refuse_reason_for_peer(::getpid(), ::geteuid() + 1));
}

TEST_F(ControlSocketTest, HelperOutsideRunsIsServed) {
  auto rc = start("cs-ok", false);
  ASSERT_TRUE(rc);
  const auto s = run_helper("request:status:" + (runtime / "runs/cs-ok.sock").string(), false);
  const auto j = nlohmann::json::parse(s.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << s.out;
  EXPECT_TRUE(j["ok"].get<bool>()) << s.out;
  EXPECT_EQ(j["run"]["state"], "starting");
}

TEST_F(ControlSocketTest, RefusesPeerWithParallexRun) {
  auto rc = start("cs-env", false);
  ASSERT_TRUE(rc);
  const auto s = run_helper("request:pause:" + (runtime / "runs/cs-env.sock").string(), true);
  const auto j = nlohmann::json::parse(s.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << s.out;
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_TRUE(j.value("refused", false));
  EXPECT_NE(j["error"].get<std::string>().find("PARALLEX_RUN=1"), std::string::npos) << s.out;
  EXPECT_EQ(rc->state(), RunState::starting);
}

TEST_F(ControlSocketTest, ClientRefusesInsideRun) {
  const auto s = run_helper("pause-all:" + runtime.string(), true);
  EXPECT_NE(s.out.find("ERROR refused"), std::string::npos) << s.out;
  EXPECT_FALSE(fs::exists(runtime / "paused"));
}

TEST_F(ControlSocketTest, CliRefusesInsideRun) {
  const fs::path cli = fs::path(PARALLEX_BINARY_DIR) / "parallex";
  if (!fs::exists(cli)) GTEST_SKIP() << "the parallex executable is not built";
  const std::string cmd =
      "XDG_RUNTIME_DIR=" + runtime.string() + " PARALLEX_RUN=1 " + cli.string() + " pause --all 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = ::pclose(p);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("inside a Parallex run"), std::string::npos) << out;
}

TEST_F(ControlSocketTest, RefusesPeerInAnotherPidNamespace) {
  auto rc = start("cs-ns", false);
  ASSERT_TRUE(rc);
  const auto s = run_helper("request:pause:" + (runtime / "runs/cs-ns.sock").string(), false, 1);
  if (s.out.empty()) GTEST_SKIP() << "cannot create a pid namespace here";
  const auto j = nlohmann::json::parse(s.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << s.out;
  EXPECT_TRUE(j.value("refused", false)) << s.out;
  EXPECT_NE(s.out.find("pid namespace"), std::string::npos) << s.out;
  EXPECT_EQ(rc->state(), RunState::starting);
}

TEST_F(ControlSocketTest, RefusesPeerInRunCgroup) {
  if (!probe_cgroup().usable) GTEST_SKIP() << probe_cgroup().why_not;
  auto rc = start("cs-cg", true);
  ASSERT_TRUE(rc);
  const auto s =
      run_helper("request:resume:" + (runtime / "runs/cs-cg.sock").string(), false, 2, rc->cgroup_fd());
  const auto j = nlohmann::json::parse(s.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << s.out;
  EXPECT_TRUE(j.value("refused", false)) << s.out;
  EXPECT_NE(s.out.find("cgroup"), std::string::npos) << s.out;
}

TEST_F(ControlSocketTest, StaleEntriesAreCleanedAndNeverBlock) {
  auto runs = runs_dir(runtime);
  ASSERT_TRUE(runs);
  // 1: a dead supervisor (its pid is gone) with its socket file left behind.
  RunEntry dead;
  dead.id = "stale-dead";
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  dead.pid = gone;
  dead.socket = runs.value() / "stale-dead.sock";
  {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, dead.socket.c_str());
    ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }  // closed: connect now gets ECONNREFUSED
  ASSERT_TRUE(write_entry(runs.value(), dead));
  // 2: a live pid (ours) whose socket refuses.
  RunEntry lost = dead;
  lost.id = "stale-lost";
  lost.pid = ::getpid();
  lost.socket = runs.value() / "stale-lost.sock";
  ASSERT_TRUE(write_entry(runs.value(), lost));
  // 3: a live run.
  auto rc = start("live-one", false);
  ASSERT_TRUE(rc);

  const auto t0 = std::chrono::steady_clock::now();
  auto paused = pause_runs(runtime, {true, ""});
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(paused) << paused.error().message;
  ASSERT_EQ(paused.value().size(), 1u);
  EXPECT_EQ(paused.value()[0].run.id, "live-one");
  EXPECT_LT(ms, 1000.0);
  EXPECT_FALSE(fs::exists(runs.value() / "stale-dead.json"));
  EXPECT_FALSE(fs::exists(runs.value() / "stale-dead.sock"));
  EXPECT_FALSE(fs::exists(runs.value() / "stale-lost.json"));
  // A new supervisor may take over a stale socket path.
  auto server = ControlServer::start(dead.socket, [](const nlohmann::json&, pid_t) {
    return nlohmann::json{{"ok", true}};
  });
  ASSERT_TRUE(server) << server.error().message;
}

TEST_F(ControlSocketTest, AnswersOverlongAndGarbageWithoutDying) {
  auto rc = start("cs-garbage", false);
  ASSERT_TRUE(rc);
  const fs::path sock = runtime / "runs/cs-garbage.sock";
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string junk = "{not json\n";
  ASSERT_EQ(::write(fd.get(), junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  char buf[512];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_NE(std::string(buf, static_cast<std::size_t>(n)).find("\"ok\":false"), std::string::npos);
  auto status = send_request(sock, {{"v", 1}, {"op", "status"}});
  ASSERT_TRUE(status);
  EXPECT_TRUE(status.value()["ok"].get<bool>());
}

}  // namespace
}  // namespace px::killswitch
