// The kill switch when the supervisor cannot answer: real `parallex run`s,
// one supervisor stopped (SIGSTOP, at several steps of its run), hung (its
// process frozen in a cgroup of its own: blocked in the kernel, deaf to
// SIGCONT), or killed (SIGKILL, with and without its watchdog). Each time
// `pause --all`, `kill --all`, `kill ID` and `resume --all` act on the run's
// processes within two seconds and say what they did; a supervisor that goes
// on afterwards holds the run as the user left it and its record says the
// truth; nothing is left in the private or runtime folders after the next
// `parallex`. With a cgroup and with the process-tree fallback.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "killswitch/cgroup.hpp"
#include "killswitch/proc.hpp"
#include "scratch.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"
#include "tree_helpers.hpp"
#include "unprivileged_user.hpp"

namespace fs = std::filesystem;
using namespace px::killswitch;
using namespace px::killswitch::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Inside the seal: a detached daemon appending to `alive`, a double fork and
// a few sleepers, every one marked.
const char* kMarkedTree = R"SH(
d=$1
setsid sh -c 'while :; do echo x >> "$0/alive"; sleep 0.02; done' "$d" </dev/null >/dev/null 2>&1 &
(sh -c 'sleep 1000 & exit 0' &)
sleep 1000 &
sleep 1000 &
echo ok > "$d/ready"
wait
)SH";

using px::test::slurp;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct PxRun {
  pid_t pid = -1;  // `parallex run`: the supervisor itself
  std::string mark;
  fs::path dir;
  std::string id;
};

class KillSwitchFaults : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !probe_cgroup().usable) GTEST_SKIP() << probe_cgroup().why_not;
    // Under /tmp: the unprivileged pass (below) writes there too.
    std::string tmpl = "/tmp/px-ks-faults-XXXXXX";
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = tmpl;
    work_ = root_ / "work";
    fs::create_directories(work_);
    fs::create_directories(root_ / "runtime");
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    std::ofstream(work_ / "tree.sh") << kMarkedTree;
  }
  void TearDown() override {
    for (auto& r : runs_) {
      if (r.pid > 0) {
        ::kill(r.pid, SIGCONT);
        ::kill(r.pid, SIGKILL);
        ::waitpid(r.pid, nullptr, 0);
      }
      for (pid_t p : marked_processes(r.mark)) ::kill(p, SIGKILL);
    }
    if (!hang_cgroup_.empty()) {
      std::ofstream(hang_cgroup_ / "cgroup.freeze") << "0";
      std::ofstream(hang_cgroup_ / "cgroup.kill") << "1";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::rmdir(hang_cgroup_.c_str());
    }
    px::test::remove_unless_failed(root_, HasFailure());
  }

  fs::path runtime() const { return root_ / "runtime" / "parallex"; }
  std::string env() const {
    return "XDG_RUNTIME_DIR=" + (root_ / "runtime").string() + " PARALLEX_HOME=" + (root_ / "data").string() +
           (GetParam() ? "" : " PARALLEX_NO_CGROUP=1");
  }
  // `parallex ARGS` from outside every run: its exit status, what it said, how long it took.
  int px(const std::string& args, std::string* out = nullptr, double* took_ms = nullptr) {
    const fs::path o = root_ / "px.out";
    const std::string cmd =
        "env " + env() + " timeout 60 " + PARALLEX_EXE + " " + args + " >" + o.string() + " 2>&1";
    const auto t0 = Clock::now();
    const int rc = std::system(cmd.c_str());
    if (took_ms) *took_ms = ms_since(t0);
    if (out) *out = slurp(o);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  // The floor beside every timing: how long `parallex runs` takes here, now
  // (start-up, plugin loading, a sanitizer's start), the slower of two. What a
  // test bounds is the time the command takes beyond it.
  double start_up_floor_ms() {
    double a = 0, b = 0;
    px("runs --json", nullptr, &a);
    px("runs --json", nullptr, &b);
    return std::max(a, b);
  }

  // A sealed run of the tree; returns once the tree is up and the run is registered.
  PxRun& start_run() {
    PxRun r;
    std::random_device rd;
    r.mark = "ksf" + std::to_string(rd()) + std::to_string(::getpid());
    r.dir = work_ / ("run" + std::to_string(runs_.size()));
    fs::create_directories(r.dir);
    const fs::path out = root_ / ("run" + std::to_string(runs_.size()) + ".out");
    r.pid = ::fork();
    if (r.pid == 0) {
      const std::string cmd = "exec env " + env() + " " + PARALLEX_EXE + " run --in " + work_.string() +
                              " -- sh -c 'PX_TREE_MARK=" + r.mark + " exec sh " +
                              (work_ / "tree.sh").string() + " " + r.dir.string() + "' >" + out.string() +
                              " 2>&1";
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
      _exit(127);
    }
    runs_.push_back(r);
    PxRun& run = runs_.back();
    EXPECT_TRUE(wait_until(
        [&] { return fs::exists(run.dir / "ready") && marked_processes(run.mark).size() >= 4; }, 30000))
        << slurp(out);
    EXPECT_TRUE(wait_until([&] { return !(run.id = registered_id(run.pid)).empty(); }, 10000));
    return run;
  }
  // The run id whose registry entry names supervisor `pid`.
  std::string registered_id(pid_t pid) const {
    std::error_code ec;
    for (fs::directory_iterator it(runtime() / "runs", ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() != ".json") continue;
      const auto j = json::parse(slurp(it->path()), nullptr, false);
      if (j.is_object() && j.value("pid", 0) == pid && j.value("child_pid", 0) > 0) return j.value("id", "");
    }
    return "";
  }
  // SIGSTOP to the run's supervisor, and true once every thread of it shows
  // stopped: kill(2) only queues the signal, which the thread woken for it
  // (the main one) takes when it next runs; until then, out of an
  // uninterruptible wait or waiting for a CPU, the socket's thread still
  // answers, and a `pause` sent meanwhile is the supervisor's own.
  bool stop_supervisor(const PxRun& r) const {
    if (::kill(r.pid, SIGSTOP) != 0) return false;
    const fs::path tasks = "/proc/" + std::to_string(r.pid) + "/task";
    return wait_until(
        [&] {
          std::error_code ec;
          for (fs::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string stat = slurp(it->path() / "stat");
            const auto close = stat.rfind(')');
            if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'T')
              return false;
          }
          return !ec;
        },
        2000);
  }
  json entry_of(const PxRun& r) const {
    return json::parse(slurp(runtime() / "runs" / (r.id + ".json")), nullptr, false);
  }
  // A process of the run held: frozen in its cgroup, or stopped (or in D
  // with SIGSTOP pending: a vfork parent whose child was stopped before its exec).
  bool held(pid_t p) const {
    return GetParam() ? task_is_cgroup_frozen(p) || ended_or_ending(p) : stopped_or_stop_pending(p);
  }
  // Every marked process of the run held.
  bool all_held(const PxRun& r) const {
    const auto procs = marked_processes(r.mark);
    if (procs.empty()) return false;
    for (const pid_t p : procs) {
      const auto st = read_proc_stat(p);
      if (!st) continue;
      if (!held(p)) return false;
    }
    return true;
  }
  // The marked processes not held, with their state and where in the kernel
  // they wait: what a failed all_held() saw.
  std::string unheld(const PxRun& r) const {
    std::string out;
    for (const pid_t p : marked_processes(r.mark)) {
      const auto st = read_proc_stat(p);
      if (!st) continue;
      if (!held(p))
        out += " pid " + std::to_string(p) + " state " + st->state + " (" +
               slurp("/proc/" + std::to_string(p) + "/comm") + ", wchan " +
               slurp("/proc/" + std::to_string(p) + "/wchan") + ")";
    }
    return out;
  }
  // Every process of the run with where it waits (state, wchan, the system
  // call it is in), for a failure that says why the run did not go on.
  std::string where_each_waits(const PxRun& r) const {
    std::string out;
    for (const pid_t p : marked_processes(r.mark)) {
      const std::string proc = "/proc/" + std::to_string(p);
      const auto st = read_proc_stat(p);
      out += " pid " + std::to_string(p) + " state " + (st ? std::string(1, st->state) : "?") + " (" +
             slurp(proc + "/comm") + ", wchan " + slurp(proc + "/wchan") + ", syscall " +
             slurp(proc + "/syscall") + ")";
    }
    return out;
  }
  // Whether the run's daemon appends to `alive` within 5 s. A file not there
  // yet counts as empty: on a busy machine the daemon's first line may come
  // after the run started (file_size's error value, the largest number, made
  // every later size look smaller: 1 in 3 runs under two busy loops).
  bool daemon_runs(const PxRun& r) const {
    const auto size = [&] {
      std::error_code ec;
      const auto n = fs::file_size(r.dir / "alive", ec);
      return ec ? std::uintmax_t{0} : n;
    };
    const auto before = size();
    return wait_until([&] { return size() > before; }, 5000);
  }
  // The supervisor's exit status, once it ended (bounded).
  int wait_supervisor(PxRun& r) {
    int status = -1;
    for (int i = 0; i < 600 && r.pid > 0; ++i) {
      if (::waitpid(r.pid, &status, WNOHANG) == r.pid) {
        r.pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }
  json record_of(const PxRun& r) const {
    return json::parse(slurp(root_ / "data" / "runs" / r.id / "run.json"), nullptr, false);
  }
  // After the next `parallex runs`: no private dir, no registry entry, socket or note left.
  void expect_nothing_left() {
    std::string out;
    EXPECT_EQ(px("runs --json", &out), 0) << out;
    std::error_code ec;
    for (fs::directory_iterator it(runtime() / "runs-private", ec), end; !ec && it != end; it.increment(ec))
      ADD_FAILURE() << "left in runs-private: " << it->path();
    for (fs::directory_iterator it(runtime() / "runs", ec), end; !ec && it != end; it.increment(ec))
      ADD_FAILURE() << "left in the registry: " << it->path();
  }

  fs::path root_, work_, hang_cgroup_;
  std::vector<PxRun> runs_;
};

}  // namespace

// Three runs, one supervisor stopped while its run goes on: pause --all and
// kill --all act on all three within two seconds, and say what they did to
// the one whose supervisor did not answer. Continued, that supervisor finds
// its run killed and records it so.
TEST_P(KillSwitchFaults, PauseAllAndKillAllWinOverAStoppedSupervisor) {
  for (int i = 0; i < 3; ++i) start_run();
  ASSERT_FALSE(HasFailure());
  PxRun& stopped = runs_[1];
  ASSERT_TRUE(stop_supervisor(stopped));

  std::string said;
  double took = 0;
  const double floor_ms = start_up_floor_ms();
  ASSERT_EQ(px("pause --all", &said, &took), 0) << said;
  EXPECT_LT(took - floor_ms, 2000) << "start-up floor " << floor_ms << " ms: " << said;
  EXPECT_NE(said.find("paused " + stopped.id + ": its supervisor (pid " + std::to_string(stopped.pid) +
                      ") is stopped (SIGSTOP)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(GetParam() ? "froze its cgroup" : "stopped its"), std::string::npos) << said;
  for (const auto& r : runs_) EXPECT_TRUE(wait_until([&] { return all_held(r); }, 1000)) << r.id << unheld(r);
  EXPECT_FALSE(daemon_runs(stopped)) << "the stopped supervisor's run kept running";
  std::string listed;
  ASSERT_EQ(px("runs --json", &listed), 0) << listed;
  const json all_runs = json::parse(listed);  // held: a range-for over a temporary's member dangles
  for (const auto& row : all_runs["runs"])
    if (row["id"] == stopped.id) {
      EXPECT_EQ(row["state"], "paused") << listed;
      EXPECT_NE(row.value("supervisor", "").find("stopped"), std::string::npos) << listed;
    }

  ASSERT_EQ(px("kill --all", &said, &took), 0) << said;
  EXPECT_LT(took - floor_ms, 2000) << "start-up floor " << floor_ms << " ms: " << said;
  EXPECT_NE(said.find("killed " + stopped.id + ": its supervisor"), std::string::npos) << said;
  for (const auto& r : runs_)
    EXPECT_TRUE(wait_until([&] { return marked_processes(r.mark).empty(); }, 2000)) << r.id;

  ASSERT_EQ(::kill(stopped.pid, SIGCONT), 0);
  for (auto& r : runs_) EXPECT_EQ(wait_supervisor(r), 137) << r.id;
  const json rec = record_of(stopped);
  EXPECT_EQ(rec.value("status", ""), "killed") << rec.dump(2);
  EXPECT_NE(
      rec["kill_switch"].dump().find("parallex kill --all (done without this supervisor, which is stopped"),
      std::string::npos)
      << rec["kill_switch"].dump(2);
  EXPECT_GE(rec.value("ended_at", ""), rec.value("started_at", "~"));
  expect_nothing_left();
}

// Stopped at other steps: once paused by its own supervisor (resumed and
// killed without it), and at once after its run registered.
TEST_P(KillSwitchFaults, ResumeAndKillIDWinOverASupervisorStoppedWhilePaused) {
  PxRun& r = start_run();
  ASSERT_FALSE(HasFailure());
  std::string said;
  ASSERT_EQ(px("pause " + r.id, &said), 0) << said;
  // The supervisor counts a process with our SIGSTOP pending as held; /proc
  // shows it stopped once it is scheduled.
  EXPECT_TRUE(wait_until([&] { return all_held(r); }, 1000)) << unheld(r);
  ASSERT_TRUE(stop_supervisor(r));
  double took = 0;
  const double floor_ms = start_up_floor_ms();
  ASSERT_EQ(px("resume " + r.id, &said, &took), 0) << said;
  EXPECT_LT(took - floor_ms, 2000) << "start-up floor " << floor_ms << " ms: " << said;
  EXPECT_NE(said.find(GetParam() ? "thawed its cgroup" : "continued its"), std::string::npos) << said;
  EXPECT_TRUE(daemon_runs(r)) << "not resumed without its supervisor";
  ASSERT_EQ(px("kill " + r.id, &said, &took), 0) << said;
  EXPECT_LT(took - floor_ms, 2000) << "start-up floor " << floor_ms << " ms: " << said;
  EXPECT_TRUE(wait_until([&] { return marked_processes(r.mark).empty(); }, 2000));
  ::kill(r.pid, SIGCONT);
  EXPECT_EQ(wait_supervisor(r), 137);
  EXPECT_EQ(record_of(r).value("status", ""), "killed");
  expect_nothing_left();
}

// A supervisor continued after a `pause --all` made without it holds the run
// paused (and its network cut) until `resume --all`.
TEST_P(KillSwitchFaults, ASupervisorContinuedLaterHonoursTheGlobalPause) {
  PxRun& r = start_run();
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(stop_supervisor(r));
  std::string said;
  ASSERT_EQ(px("pause --all", &said), 0) << said;
  ASSERT_EQ(::kill(r.pid, SIGCONT), 0);
  // It takes in what was done (its socket's thread looks four times a second).
  EXPECT_TRUE(wait_until([&] { return entry_of(r).value("state", "") == "paused"; }, 3000))
      << entry_of(r).dump();
  EXPECT_FALSE(fs::exists(runtime() / "runs" / (r.id + ".direct")));
  // Held at once, though a busy machine may schedule a process a moment
  // after its SIGSTOP was sent before /proc shows it stopped.
  EXPECT_TRUE(wait_until([&] { return all_held(r); }, 1000)) << unheld(r);
  EXPECT_FALSE(daemon_runs(r)) << "the run went on under a global pause";
  std::string listed;
  ASSERT_EQ(px("runs --json", &listed), 0);
  EXPECT_NE(listed.find("\"paused\""), std::string::npos) << listed;
  ASSERT_EQ(px("resume --all", &said), 0) << said;
  EXPECT_EQ(said.find("directly"), std::string::npos) << "it answers itself once continued: " << said;
  EXPECT_TRUE(daemon_runs(r));
  ASSERT_EQ(px("kill --all", &said), 0) << said;
  EXPECT_EQ(wait_supervisor(r), 137);
  const json rec = record_of(r);
  EXPECT_NE(rec["kill_switch"].dump().find("parallex pause --all (done without this supervisor"),
            std::string::npos)
      << rec["kill_switch"].dump(2);
  expect_nothing_left();
}

// Hung: the supervisor frozen in a cgroup of its own (blocked in the kernel,
// as in a system call that does not return). Its socket still takes the
// connection; `kill ID` waits one second for an answer, then acts.
TEST_P(KillSwitchFaults, KillIDWinsOverAHungSupervisor) {
  if (::geteuid() != 0) GTEST_SKIP() << "freezing the supervisor in a cgroup of its own needs root";
  const auto mount = find_cgroup2_mount();
  if (!mount) GTEST_SKIP() << "no cgroup v2 to hang the supervisor with";
  const fs::path hang = *mount / ("pxtest-hang-" + std::to_string(::getpid()));
  if (::mkdir(hang.c_str(), 0755) != 0)
    GTEST_SKIP() << "cannot make " << hang << ": " << std::strerror(errno);
  hang_cgroup_ = hang;
  if (!fs::exists(hang / "cgroup.freeze")) GTEST_SKIP() << "no cgroup.freeze (Linux 5.2 or later)";
  PxRun& r = start_run();
  ASSERT_FALSE(HasFailure());
  std::ofstream(hang_cgroup_ / "cgroup.procs") << r.pid;
  std::ofstream(hang_cgroup_ / "cgroup.freeze") << "1";
  ASSERT_TRUE(wait_until(
      [&] { return slurp(hang_cgroup_ / "cgroup.events").find("frozen 1") != std::string::npos; }, 3000));
  EXPECT_TRUE(daemon_runs(r)) << "the run itself is not frozen:" << where_each_waits(r);
  std::string said;
  double took = 0;
  const double floor_ms = start_up_floor_ms();
  ASSERT_EQ(px("kill " + r.id, &said, &took), 0) << said;
  // One second of waiting for the answer, then the kill itself.
  EXPECT_GE(took, 1000) << said;
  EXPECT_LT(took - floor_ms, 2000) << "start-up floor " << floor_ms << " ms: " << said;
  EXPECT_NE(said.find("did not answer within 1000 ms"), std::string::npos) << said;
  EXPECT_TRUE(wait_until([&] { return marked_processes(r.mark).empty(); }, 2000));
  std::ofstream(hang_cgroup_ / "cgroup.freeze") << "0";
  EXPECT_EQ(wait_supervisor(r), 137);
  EXPECT_EQ(record_of(r).value("status", ""), "killed");
  expect_nothing_left();
}

// kill -9 of the supervisor: the watchdog ends the run and removes its
// private dir; of the supervisor and its watchdog both: the next `parallex
// runs` does, and closes the record as lost, its end not before its start.
TEST_P(KillSwitchFaults, ASigkilledSupervisorLeavesNoPrivateDir) {
  PxRun& a = start_run();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(::kill(a.pid, SIGKILL), 0);
  EXPECT_EQ(wait_supervisor(a), 137);
  EXPECT_TRUE(wait_until([&] { return marked_processes(a.mark).empty(); }, 5000));
  const auto private_dirs = [&] {
    std::size_t n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(runtime() / "runs-private", ec), end; !ec && it != end; it.increment(ec))
      ++n;
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return private_dirs() == 0; }, 5000)) << "the watchdog left the private dir";

  PxRun& b = start_run();
  ASSERT_FALSE(HasFailure());
  const pid_t watchdog = entry_of(b).value("watchdog_pid", 0);
  ASSERT_GT(watchdog, 0);
  ::kill(watchdog, SIGKILL);
  ASSERT_EQ(::kill(b.pid, SIGKILL), 0);
  EXPECT_EQ(wait_supervisor(b), 137);
  EXPECT_TRUE(wait_until([&] { return marked_processes(b.mark).empty(); }, 5000));
  EXPECT_EQ(private_dirs(), 1u) << "nothing removed it yet";
  expect_nothing_left();
  const json rec = record_of(b);
  EXPECT_EQ(rec.value("status", ""), "lost") << rec.dump(2);
  EXPECT_GE(rec.value("ended_at", ""), rec.value("started_at", "~"));
  EXPECT_FALSE(fs::exists(root_ / "data" / "runs" / b.id / ".reserve"));
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, KillSwitchFaults, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "cgroup" : "fallback"; });

// The same faults for a user: runs tracked by the process-tree fallback
// (without a delegated cgroup), the user's own runtime folder.
TEST(KillSwitchFaultsUnprivileged, AsUnprivilegedUser) {
  if (::getuid() != 0) GTEST_SKIP() << "already unprivileged: this whole run is the unprivileged pass";
  if (std::getenv("PX_KS_FAULTS_CHILD")) GTEST_SKIP() << "nested";
  const auto user = px::test::unprivileged_user();
  if (!user) GTEST_SKIP() << "cannot create the unprivileged user pxtest (useradd failed)";
  const px::test::Pass pass =
      px::test::rerun_self_as(*user, "Mechanisms/KillSwitchFaults.*", "PX_KS_FAULTS_CHILD");
  std::printf("---- the fault suite as %s (uid %u), %d skip lines ----\n%s---- end ----\n",
              user->name.c_str(), user->uid, pass.inner_skips, pass.output.c_str());
  EXPECT_TRUE(pass.passed()) << "the unprivileged pass failed (status " << pass.status << ")";
}
