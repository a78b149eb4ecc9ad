// How a run ends when its supervisor is told to stop, is killed, or fails at
// a step: the real executable, real runs, real signals. What must hold every
// time: the run's processes are gone (killed and reaped), the record is
// finished (or, for a SIGKILLed supervisor, closed afterwards with its end
// marked unknown), nothing is attributed to a run after its end, and no
// private dir of the run is left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run/record.hpp"
#include "scratch.hpp"
#include "test_paths.hpp"
#include "wait.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using px::test::wait_until;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A process of the run, by pid and start time (a reused pid is another process).
struct Proc {
  pid_t pid;
  std::uint64_t start;
};

// Every process whose command line holds `token` (zombies have none: they
// are caught by `still_there` on the pids found while they lived).
std::vector<Proc> processes_with(const std::string& token) {
  std::vector<Proc> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    std::string cmdline = read_text(it->path() / "cmdline");
    for (auto& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(token) != std::string::npos) out.push_back({pid, px::run::process_start_ticks(pid)});
  }
  return out;
}

// Reaps the processes this test process adopted: other tests of this
// executable make it a child subreaper (the kill switch's fallback), so the
// orphans of a dead supervisor come here, as they would go to init, which
// reaps them. Only dead ones are reaped (WNOHANG).
void reap_adopted() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// Alive or a zombie: /proc still has it, with the same start time.
bool still_there(const Proc& p) {
  reap_adopted();
  const std::uint64_t now = px::run::process_start_ticks(p.pid);
  return now != 0 && now == p.start;
}

std::string state_of(pid_t pid) {
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? "?" : stat.substr(close + 2, 1);
}

std::string random_token() {
  std::random_device rd;
  return "9999." + std::to_string(100000 + rd() % 800000);
}

// A private PARALLEX_HOME, XDG_RUNTIME_DIR, HOME and a run folder (a git
// repository), under the build dir.
class RunEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "run-end-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "data", "runtime", "work"}) fs::create_directories(root_ / d);
    ::chmod((root_ / "runtime").c_str(), 0700);
    work_ = root_ / "work";
    std::ofstream(work_ / "README") << "hello\n";
    ASSERT_EQ(git("init -q && " + git_cmd() + " add README && " + git_cmd() + " commit -qm base"), 0);
  }
  void TearDown() override {
    for (pid_t pid : spawned_)
      if (::kill(pid, 0) == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    px::test::remove_unless_failed(root_, HasFailure());
  }

  std::string git_cmd() const {
    return "git -C '" + work_.string() + "' -c user.name=t -c user.email=t@example.com";
  }
  int git(const std::string& rest) const { return std::system((git_cmd() + " " + rest).c_str()); }

  std::vector<std::string> env(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> e{"HOME=" + (root_ / "home").string(),
                               "PATH=/usr/local/bin:/usr/bin:/bin",
                               "LANG=C.UTF-8",
                               "PARALLEX_HOME=" + (root_ / "data").string(),
                               "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
                               "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
    e.insert(e.end(), extra.begin(), extra.end());
    return e;
  }

  // Starts `[WRAPPER...] parallex ARGS` in the run folder, in a process group
  // of its own (so a signal the test sends reaches the supervisor only, as
  // `kill` does; a wrapper such as timeout(1) signals that group itself).
  pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& environment,
              const std::string& log_name = "px.log", const std::vector<std::string>& wrapper = {}) {
    std::vector<std::string> argv = wrapper;
    argv.push_back(PARALLEX_EXE);
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string log = (root_ / log_name).string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      if (::chdir(work_.c_str()) != 0) ::_exit(120);
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      std::vector<char*> a, e;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      std::vector<std::string> env_copy = environment;
      for (auto& s : env_copy) e.push_back(s.data());
      e.push_back(nullptr);
      ::execve(a[0], a.data(), e.data());
      ::_exit(127);
    }
    spawned_.push_back(pid);
    return pid;
  }

  // The exit status (-1 when it did not exit in time: it is killed then).
  int wait_exit(pid_t pid, int ms = 30000) {
    int status = 0;
    for (int waited = 0; waited < ms; waited += 20) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }

  int run_px(const std::vector<std::string>& args, const std::vector<std::string>& environment,
             const std::string& log_name) {
    return wait_exit(spawn(args, environment, log_name), 120000);
  }

  // The only run folder under `runs`.
  fs::path only_run(const fs::path& runs) const {
    std::vector<fs::path> found;
    std::error_code ec;
    for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec))
      found.push_back(it->path());
    return found.size() == 1 ? found.front() : fs::path();
  }
  fs::path adhoc_runs() const { return root_ / "data/runs"; }
  fs::path private_runs() const { return root_ / "runtime/parallex/runs-private"; }

  // Nothing left in the runs' private dirs.
  void expect_no_private_dir() const {
    std::error_code ec;
    if (!fs::exists(private_runs(), ec)) return;
    std::string left;
    for (fs::directory_iterator it(private_runs(), ec), end; !ec && it != end; it.increment(ec))
      left += it->path().string() + " ";
    EXPECT_TRUE(left.empty()) << "the run's private dir was left behind: " << left;
  }

  // Starts a run whose command is a small tree (two children, one in a
  // session of its own) that says when it is up; returns its supervisor.
  pid_t start_tree(const std::vector<std::string>& run_args, const std::string& token) {
    std::vector<std::string> args = run_args;
    args.insert(args.end(), {"--", "/bin/sh", "-c",
                             "sleep " + token + " & setsid sleep " + token + " & sleep " + token +
                                 " & echo up > ready; wait"});
    return spawn(args, env());
  }

  bool tree_up(const std::string& token) const {
    return fs::exists(work_ / "ready") && processes_with(token).size() >= 3;
  }

  fs::path root_, work_;
  std::vector<pid_t> spawned_;
};

// ---- a supervisor told to stop ---------------------------------------------

class StopSignal : public RunEnd, public ::testing::WithParamInterface<int> {};

TEST_P(StopSignal, EndsTheRunKillsAndReapsItsTreeAndFinishesTheRecord) {
  const int sig = GetParam();
  const std::string token = random_token();
  const pid_t supervisor = start_tree({"run"}, token);
  ASSERT_TRUE(wait_until([&] { return tree_up(token); }, 30000)) << read_text(root_ / "px.log");
  const std::vector<Proc> tree = processes_with(token);

  ASSERT_EQ(::kill(supervisor, sig), 0);
  const int status = wait_exit(supervisor);
  EXPECT_EQ(status, 128 + sig) << read_text(root_ / "px.log");

  // Killed and reaped: not alive, not a zombie.
  for (const auto& p : tree)
    EXPECT_TRUE(wait_until([&] { return !still_there(p); }, 5000))
        << "process " << p.pid << " of the run outlived its supervisor (state " << state_of(p.pid) << ")";
  EXPECT_TRUE(processes_with(token).empty());

  const fs::path run_dir = only_run(adhoc_runs());
  ASSERT_FALSE(run_dir.empty());
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_TRUE(record["ended_at"].is_string()) << record.dump(1);
  EXPECT_EQ(record["status"], "interrupted");
  EXPECT_EQ(record["signal"], sig);
  EXPECT_EQ(record["exit_status"], 128 + sig);
  EXPECT_NE(read_text(root_ / "px.log").find(std::string("SIG") + ::sigabbrev_np(sig)), std::string::npos)
      << read_text(root_ / "px.log");
  expect_no_private_dir();
}

INSTANTIATE_TEST_SUITE_P(Signals, StopSignal, ::testing::Values(SIGTERM, SIGHUP, SIGINT),
                         [](const auto& param_info) {
                           return std::string("SIG") + ::sigabbrev_np(param_info.param);
                         });

// `timeout 60 parallex agent run ...`: when its time is up timeout signals
// the supervisor and its whole process group; the agent's run ends the same
// way, and its report stops at that end. Its time is made up once the run is
// going: SIGALRM is timeout's own timer (the same path as the minute
// passing), so a slow start (ASan, a loaded machine) never ends the run early.
TEST_F(RunEnd, TimeoutEndsAnAgentRun) {
  ASSERT_EQ(run_px({"agent", "new", "stopbot", "--email", "stopbot@example.com"}, env(), "new.log"), 0)
      << read_text(root_ / "new.log");
  const std::string token = random_token();
  const pid_t pid =
      spawn({"agent", "run", "stopbot", "--", "/bin/sh", "-c", "sleep " + token + " & echo up > ready; wait"},
            env(), "timeout.log", {"/usr/bin/timeout", "-s", "TERM", "60"});
  const fs::path log = root_ / "timeout.log";
  ASSERT_TRUE(wait_until([&] { return fs::exists(work_ / "ready"); }, 30000)) << read_text(log);
  const std::vector<Proc> tree = processes_with(token);
  ASSERT_EQ(::kill(pid, SIGALRM), 0);
  EXPECT_EQ(wait_exit(pid), 124) << read_text(log);  // timeout's own status once the command ended
  for (const auto& p : tree) EXPECT_TRUE(wait_until([&] { return !still_there(p); }, 5000)) << p.pid;

  const fs::path run_dir = only_run(root_ / "data/agents/stopbot/runs");
  ASSERT_FALSE(run_dir.empty());
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_TRUE(record["ended_at"].is_string()) << record.dump(1);
  EXPECT_EQ(record["status"], "interrupted") << record.dump(1);
  EXPECT_EQ(record["signal"], SIGTERM);
  EXPECT_EQ(record["exit_status"], 128 + SIGTERM);
  expect_no_private_dir();
}

// ---- a run killed with `parallex kill` -------------------------------------

// `parallex kill ID` from outside: the supervisor answers, the kill switch
// kills the tree, and the record says the run was killed (not that its
// command died of a signal) with the exit status the supervisor ended with.
// With a cgroup and with the process-tree fallback.
class KilledRun : public RunEnd, public ::testing::WithParamInterface<bool> {};

TEST_P(KilledRun, ItsRecordSaysKilled) {
  const std::string token = random_token();
  const std::vector<std::string> environment = GetParam() ? env() : env({"PARALLEX_NO_CGROUP=1"});
  std::vector<std::string> args{"run", "--", "/bin/sh", "-c",
                                "sleep " + token + " & setsid sleep " + token + " & echo up > ready; wait"};
  const pid_t supervisor = spawn(args, environment);
  ASSERT_TRUE(
      wait_until([&] { return fs::exists(work_ / "ready") && processes_with(token).size() >= 2; }, 30000))
      << read_text(root_ / "px.log");
  const std::vector<Proc> tree = processes_with(token);
  const fs::path run_dir = only_run(adhoc_runs());
  ASSERT_FALSE(run_dir.empty());
  const std::string id = run_dir.filename().string();

  ASSERT_EQ(run_px({"kill", id}, environment, "kill.log"), 0) << read_text(root_ / "kill.log");
  EXPECT_EQ(wait_exit(supervisor), 128 + SIGKILL) << read_text(root_ / "px.log");
  for (const auto& p : tree) EXPECT_TRUE(wait_until([&] { return !still_there(p); }, 5000)) << p.pid;

  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_EQ(record["status"], "killed") << record.dump(1);
  EXPECT_EQ(record["exit_status"], 128 + SIGKILL) << record.dump(1);
  EXPECT_TRUE(record["ended_at"].is_string()) << record.dump(1);
  EXPECT_NE(record["kill_switch"].dump().find("parallex kill " + id), std::string::npos)
      << record["kill_switch"].dump(1);
  expect_no_private_dir();
}
INSTANTIATE_TEST_SUITE_P(Tracking, KilledRun, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "Cgroup" : "ProcessTree"; });

// ---- the seal's fork --------------------------------------------------------

// The seal is forked while the supervisor runs no thread but the forking one
// (a fork copies only it, and a lock another thread held, the allocator's or
// stdio's, would stay held in the seal, which allocates and prints): checked
// at each fork (PARALLEX_TEST_THREADS_AT_FORK), for four sealed runs started
// at once on this machine's two cores, each run's supervisor already holding
// its stop signals.
TEST_F(RunEnd, TheSealIsForkedWithNoOtherThreadOfTheSupervisorRunning) {
  constexpr int kRuns = 4;
  std::vector<pid_t> supervisors;
  for (int i = 0; i < kRuns; ++i) {
    const std::string count = (root_ / ("threads-" + std::to_string(i))).string();
    supervisors.push_back(spawn({"run", "--", "/bin/sh", "-c", "echo ran"},
                                env({"PARALLEX_TEST_THREADS_AT_FORK=" + count}),
                                "fork-" + std::to_string(i) + ".log"));
  }
  for (int i = 0; i < kRuns; ++i) {
    const int status = wait_exit(supervisors[i], 120000);
    const std::string log = read_text(root_ / ("fork-" + std::to_string(i) + ".log"));
    EXPECT_EQ(status, 0) << log;
    EXPECT_EQ(read_text(root_ / ("threads-" + std::to_string(i))), "1\n")
        << "threads of the supervisor as it forked the seal, run " << i << ": " << log;
  }
}

// ---- a supervisor killed with SIGKILL ------------------------------------

// Nothing can finish the record then: the next `parallex runs` closes it as
// lost (its end marked unknown, taken as the last trace it left), and the
// report counts nothing after that end as the run's, not even a commit made
// in its folder afterwards.
TEST_F(RunEnd, ASigkilledSupervisorsRunIsClosedByRunsAndItsReportStopsAtItsEnd) {
  ASSERT_EQ(run_px({"agent", "new", "lostbot", "--email", "lostbot@example.com"}, env(), "new.log"), 0)
      << read_text(root_ / "new.log");
  const std::string token = random_token();
  const pid_t supervisor = start_tree({"agent", "run", "lostbot"}, token);
  ASSERT_TRUE(wait_until([&] { return tree_up(token); }, 30000)) << read_text(root_ / "px.log");
  const std::vector<Proc> tree = processes_with(token);
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  EXPECT_EQ(wait_exit(supervisor), 1000 + SIGKILL);
  // The kill switch's watchdog (or the pid namespace) takes the tree down.
  for (const auto& p : tree) EXPECT_TRUE(wait_until([&] { return !still_there(p); }, 10000)) << p.pid;

  const fs::path run_dir = only_run(root_ / "data/agents/lostbot/runs");
  ASSERT_FALSE(run_dir.empty());
  EXPECT_TRUE(json::parse(read_text(run_dir / "run.json"))["ended_at"].is_null());

  // After the run's last trace, a commit in its folder: not the run's.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::ofstream(work_ / "later.txt") << "after the run\n";
  ASSERT_EQ(git("add later.txt && " + git_cmd() + " commit -qm 'made after the run'"), 0);

  ASSERT_EQ(run_px({"runs", "--json"}, env(), "runs.log"), 0) << read_text(root_ / "runs.log");
  const std::string runs_out = read_text(root_ / "runs.log");
  EXPECT_NE(runs_out.find(run_dir.filename().string()), std::string::npos) << runs_out;
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_EQ(record["status"], "lost") << record.dump(1);
  EXPECT_EQ(record["end_known"], false);
  ASSERT_TRUE(record["ended_at"].is_string());
  EXPECT_EQ(record["exit_status"], nullptr);

  // A second `runs` has nothing more to close.
  ASSERT_EQ(run_px({"runs", "--json"}, env(), "runs2.log"), 0);
  EXPECT_EQ(read_text(root_ / "runs2.log").find(run_dir.filename().string()), std::string::npos);

  ASSERT_EQ(run_px({"report", "--agent", "lostbot", "--json"}, env(), "report.log"), 0)
      << read_text(root_ / "report.log");
  const std::string report_text = read_text(root_ / "report.log");
  const json report = json::parse(report_text.substr(report_text.find('{')), nullptr, false);
  ASSERT_TRUE(report.is_object()) << report_text;
  ASSERT_EQ(report["runs"].size(), 1u);
  const json& run = report["runs"][0];
  EXPECT_EQ(run["status"], "lost");
  EXPECT_EQ(run["end_known"], false);
  EXPECT_TRUE(run["commits"].empty())
      << "a commit made after the run's end was counted as its own: " << run["commits"].dump(1);
  bool end_warned = false;
  for (const auto& w : run["warnings"])
    end_warned = end_warned || w.get<std::string>().find("end") != std::string::npos;
  EXPECT_TRUE(end_warned) << run["warnings"].dump(1);
}

// What the run made at the protected paths while nothing could move it (the
// supervisor stopped, so its watch too) is moved aside by the run's watchdog
// once the supervisor is killed and the run's processes are dead: gone from
// the folder, in the record folder's quarantine with what it held, and shown
// by `parallex runs` and `parallex report`, which close the record as lost.
// With a cgroup the watchdog knows the run is dead when the cgroup is empty;
// without one (PARALLEX_NO_CGROUP=1), when the run's first process has ended
// and nothing runs in its pid namespace (a zombie left for a reaper does not
// count: this test process adopts orphans and reaps them late).
class SweepAfterDeath : public RunEnd, public ::testing::WithParamInterface<bool> {};

TEST_P(SweepAfterDeath, TheWatchdogMovesAsideWhatTheRunMadeAtTheProtectedPaths) {
  const std::string token = random_token();
  const bool cgroup = GetParam();
  const pid_t supervisor = spawn(
      {"run", "--harness", "claude-code", "--", "/bin/sh", "-c",
       "echo up > ready; while [ ! -e go ]; do sleep 0.02; done; "
       "mkdir -p .vscode .claude; echo '{\"mcpServers\":{\"x\":{\"command\":\"/tmp/evil\"}}}' > .mcp.json; "
       "echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}' > .vscode/tasks.json; "
       "echo '{\"hooks\":{\"Stop\":\"/tmp/evil\"}}' > .claude/settings.json; "
       "git init -q vendor/a/b/x; printf '#!/bin/sh\\nid\\n' > vendor/a/b/x/.git/hooks/post-checkout; "
       "echo made > made; sleep " +
           token},
      cgroup ? env() : env({"PARALLEX_NO_CGROUP=1"}));
  ASSERT_TRUE(wait_until([&] { return fs::exists(work_ / "ready"); }, 30000)) << read_text(root_ / "px.log");
  // Stopped, the supervisor's watch moves nothing: what the run makes now
  // stays until the supervisor's death.
  ASSERT_EQ(::kill(supervisor, SIGSTOP), 0);
  std::ofstream(work_ / "go") << "go\n";
  ASSERT_TRUE(wait_until([&] { return fs::exists(work_ / "made"); }, 10000));
  ASSERT_TRUE(fs::exists(work_ / ".mcp.json"));
  ASSERT_TRUE(fs::exists(work_ / ".vscode/tasks.json"));
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  EXPECT_EQ(wait_exit(supervisor), 1000 + SIGKILL);

  const fs::path run_dir = only_run(adhoc_runs());
  ASSERT_FALSE(run_dir.empty());
  const std::vector<std::pair<std::string, std::string>> made{
      {".mcp.json", "/tmp/evil"},
      {".vscode/tasks.json", "folderOpen"},
      {".claude/settings.json", "Stop"},
      {"vendor/a/b/x/.git/hooks/post-checkout", "id"}};
  for (const auto& [rel, inside] : made) {
    const fs::path at = work_ / rel;  // a lambda may not capture a structured binding before clang 16
    EXPECT_TRUE(wait_until([&] { return !fs::exists(fs::symlink_status(at)); }, 15000))
        << rel << " is still in the run folder";
    EXPECT_NE(read_text(run_dir / "quarantine" / rel).find(inside), std::string::npos)
        << rel << " is not in the run's quarantine with what it held";
  }
  EXPECT_TRUE(processes_with(token).empty());
  // The watchdog adds what it moved to the record: wait for it to be written.
  ASSERT_TRUE(wait_until(
      [&] {
        const json r = json::parse(read_text(run_dir / "run.json"), nullptr, false);
        return r.is_object() && r.value("quarantined", json::array()).size() == made.size();
      },
      10000))
      << read_text(run_dir / "run.json");

  ASSERT_EQ(run_px({"runs", "--json"}, env(), "runs.log"), 0) << read_text(root_ / "runs.log");
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_EQ(record["status"], "lost") << record.dump(1);
  ASSERT_EQ(record["quarantined"].size(), made.size()) << record.dump(1);
  for (const auto& q : record["quarantined"]) {
    EXPECT_EQ(q["when"], "after its supervisor died") << q.dump();
    EXPECT_TRUE(fs::exists(q["moved_to"].get<std::string>())) << q.dump();
  }
  EXPECT_NE(read_text(root_ / "runs.log").find(".mcp.json"), std::string::npos)
      << read_text(root_ / "runs.log");

  ASSERT_EQ(run_px({"report", "--run", run_dir.filename().string()}, env(), "report.log"), 0)
      << read_text(root_ / "report.log");
  const std::string report = read_text(root_ / "report.log");
  for (const auto& [rel, inside] : made)
    EXPECT_NE(report.find(rel), std::string::npos) << rel << "\n" << report;
  EXPECT_NE(report.find("MOVED"), std::string::npos) << report;
  EXPECT_NE(json::parse(read_text(run_dir / "run.json"))["notices"][0].dump().find(
                cgroup ? "cgroup v2" : "process-tree fallback"),
            std::string::npos);
}
INSTANTIATE_TEST_SUITE_P(Tracking, SweepAfterDeath, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "Cgroup" : "ProcessTree"; });

// ---- a step of the run that fails ------------------------------------------

// PARALLEX_TEST_FAIL_AT=STEP makes that step fail. Whatever fails once the
// record exists, the record is finished with a status; nothing ran; the
// run's private dir is gone. When the record itself cannot be written, no
// empty run folder is left either.
class FailingStep : public RunEnd, public ::testing::WithParamInterface<const char*> {};

TEST_P(FailingStep, FinishesTheRecordAndLeavesNoPrivateDir) {
  const std::string step = GetParam();
  const std::string marker = (work_ / "ran").string();
  const int status = run_px({"run", "--", "/bin/sh", "-c", "touch '" + marker + "'"},
                            env({"PARALLEX_TEST_FAIL_AT=" + step}), "fail.log");
  const std::string log = read_text(root_ / "fail.log");
  EXPECT_EQ(status, 125) << log;
  EXPECT_FALSE(fs::exists(marker)) << "the command ran although " << step << " failed";
  EXPECT_NE(log.find("fault injected at " + step), std::string::npos) << log;
  expect_no_private_dir();
  std::error_code ec;
  if (step == "record") {
    // No record could be made: no run folder is left half made.
    EXPECT_TRUE(!fs::exists(adhoc_runs(), ec) || fs::is_empty(adhoc_runs(), ec)) << log;
    return;
  }
  const fs::path run_dir = only_run(adhoc_runs());
  ASSERT_FALSE(run_dir.empty()) << log;
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_TRUE(record["ended_at"].is_string()) << record.dump(1);
  EXPECT_EQ(record["status"], "setup-failed") << record.dump(1);
  EXPECT_EQ(record["exit_status"], 125);
  EXPECT_NE(record["setup_error"].get<std::string>().find(step), std::string::npos) << record.dump(1);
}

// The supervisor arms its kill switch while the seal builds its view; the
// command waits for it. Unsealed, the plain child waits the same way.
TEST_F(RunEnd, AnUnsealedCommandWaitsForTheKillSwitchAndNeverRunsWhenItCannotBeArmed) {
  const std::string marker = (work_ / "ran-unsealed").string();
  const int status = run_px({"run", "--unsealed", "--", "/bin/sh", "-c", "touch '" + marker + "'"},
                            env({"PARALLEX_TEST_FAIL_AT=arm"}), "fail-unsealed.log");
  const std::string log = read_text(root_ / "fail-unsealed.log");
  EXPECT_EQ(status, 125) << log;
  EXPECT_FALSE(fs::exists(marker)) << "the unsealed command ran although its kill switch was not armed";
  EXPECT_NE(log.find("fault injected at arm"), std::string::npos) << log;
  expect_no_private_dir();
  const fs::path run_dir = only_run(adhoc_runs());
  ASSERT_FALSE(run_dir.empty()) << log;
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_EQ(record["status"], "setup-failed") << record.dump(1);
}

// PARALLEX_TEST_THROW_AT=STEP makes that step throw what a thread that
// cannot start throws (std::system_error): the guard ends the run as a step
// that failed, the record finished (not left `starting` or `running`) with
// the reason, the private dir gone, nothing of the run still running. At
// `stop-signals` the record was not made yet; at `arm` the seal's first
// process waits for the go-ahead; at `started` the record said `running`.
class ThrowingStep : public RunEnd, public ::testing::WithParamInterface<const char*> {};

TEST_P(ThrowingStep, FinishesTheRecordAndLeavesNoPrivateDir) {
  const std::string step = GetParam();
  const std::string marker = (work_ / "ran").string();
  const std::string token = random_token();
  const int status = run_px({"run", "--", "/bin/sh", "-c", "touch '" + marker + "'; sleep " + token},
                            env({"PARALLEX_TEST_THROW_AT=" + step}), "throw.log");
  const std::string log = read_text(root_ / "throw.log");
  EXPECT_EQ(status, 125) << log;
  EXPECT_FALSE(fs::exists(marker)) << "the command ran although " << step << " threw";
  EXPECT_TRUE(wait_until([&] { return processes_with(token).empty(); }, 5000));
  EXPECT_NE(log.find("fault thrown at " + step), std::string::npos) << log;
  expect_no_private_dir();
  const fs::path run_dir = only_run(adhoc_runs());
  ASSERT_FALSE(run_dir.empty()) << log;
  const json record = json::parse(read_text(run_dir / "run.json"));
  EXPECT_TRUE(record["ended_at"].is_string()) << record.dump(1);
  EXPECT_EQ(record["status"], "setup-failed") << record.dump(1);
  EXPECT_EQ(record["exit_status"], 125);
  EXPECT_NE(record["setup_error"].get<std::string>().find("fault thrown at " + step), std::string::npos)
      << record.dump(1);
  // Nothing of the run is left registered as live.
  std::error_code ec;
  for (fs::directory_iterator it(root_ / "runtime/parallex/runs", ec), end; !ec && it != end;
       it.increment(ec))
    if (it->path().extension() == ".json" || it->path().extension() == ".sock")
      ADD_FAILURE() << "left in the registry: " << it->path();
}

INSTANTIATE_TEST_SUITE_P(Steps, ThrowingStep,
                         ::testing::Values("stop-signals", "kill-switch", "arm", "started"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

INSTANTIATE_TEST_SUITE_P(Steps, FailingStep,
                         ::testing::Values("record", "kill-switch", "global-pause", "state-dirs",
                                           "environment", "launch", "arm"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
