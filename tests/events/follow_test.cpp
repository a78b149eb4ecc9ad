// `parallex events --follow` against real runs: ten sealed runs at once, each
// asking its DNS for names inside and outside its rule. Every decision comes
// once, in each run's order, and is what the run's record holds; a reader
// that is stopped, with a pipe nobody reads, does not slow the runs and
// loses nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run/record.hpp"
#include "scratch.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"
#include "wait.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using px::test::wait_until;

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

std::size_t line_count(const fs::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

class EventsFollow : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "events-follow-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "data", "runtime", "work", "out"}) fs::create_directories(root_ / d);
    ::chmod((root_ / "runtime").c_str(), 0700);
  }
  void TearDown() override {
    if (follower_ > 0) stop_follower();
    px::test::remove_unless_failed(root_, HasFailure());
  }

  std::vector<std::string> env() const {
    return {"HOME=" + (root_ / "home").string(),
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "LANG=C.UTF-8",
            "PARALLEX_HOME=" + (root_ / "data").string(),
            "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
            "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
  }

  // `parallex events --follow --json` with its standard output on `out_fd`.
  void start_follower(int out_fd) {
    follower_ = ::fork();
    if (follower_ == 0) {
      ::setpgid(0, 0);
      const int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(out_fd, 1);
      ::dup2(null, 2);
      std::vector<std::string> e = env();
      std::vector<char*> envp;
      for (auto& s : e) envp.push_back(s.data());
      envp.push_back(nullptr);
      std::vector<std::string> args{PARALLEX_EXE, "events", "--follow", "--json"};
      std::vector<char*> argv;
      for (auto& s : args) argv.push_back(s.data());
      argv.push_back(nullptr);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    // Its first look at the runs folders comes before the runs start.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  void stop_follower() {
    ::kill(follower_, SIGCONT);
    ::kill(follower_, SIGTERM);
    ::waitpid(follower_, nullptr, 0);
    follower_ = -1;
  }

  // `count` sealed runs at once, each asking `lookups` times for a name it may
  // reach and one it may not; their wall time in ms.
  double runs_at_once(int count, int lookups) {
    const std::string script = "i=0; while [ $i -lt " + std::to_string(lookups) +
                               " ]; do getent hosts ok.test >/dev/null; getent hosts evil$i.test; "
                               "i=$((i+1)); done; true";
    std::vector<std::thread> threads;
    std::vector<px::test::Outcome> outcomes(count);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
      threads.emplace_back([&, i] {
        outcomes[i] = px::test::spawn_and_wait({PARALLEX_EXE, "run", "--in", (root_ / "work").string(),
                                                "--allow", "ok.test", "--", "sh", "-c", script},
                                               env(), root_ / "out", std::chrono::seconds(300));
      });
    for (auto& t : threads) t.join();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& o : outcomes) EXPECT_EQ(o.status, 0) << o.err;
    return ms;
  }

  std::vector<fs::path> run_dirs() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(root_ / "data/runs", ec), end; !ec && it != end; it.increment(ec))
      out.push_back(it->path());
    return out;
  }

  // `parallex events --run ID --json`: the run's events as recorded.
  std::vector<json> recorded_events(const std::string& id) {
    const auto o =
        px::test::spawn_and_wait({PARALLEX_EXE, "events", "--run", id, "--json"}, env(), root_ / "out");
    EXPECT_EQ(o.status, 0) << o.err;
    return json_lines(o.out);
  }

  // Skips when this machine cannot give a sealed run its own network (the
  // run's DNS is what the runs here ask).
  bool can_seal() {
    const auto o = px::test::spawn_and_wait({PARALLEX_EXE, "run", "--in", (root_ / "work").string(),
                                             "--allow", "ok.test", "--", "getent", "hosts", "ok.test"},
                                            env(), root_ / "out");
    std::error_code ec;
    for (const auto& d : run_dirs()) fs::remove_all(d, ec);
    return o.status == 0;
  }

  // The follower's events, by run, and each run's record checked against them.
  void expect_every_decision_once_in_order(const std::vector<json>& followed, std::size_t runs) {
    std::map<std::string, std::vector<json>> by_run;
    for (const auto& e : followed) by_run[e["run"]].push_back(e);
    const auto dirs = run_dirs();
    ASSERT_EQ(dirs.size(), runs);
    ASSERT_EQ(by_run.size(), runs);
    for (const auto& dir : dirs) {
      const std::string id = dir.filename();
      SCOPED_TRACE("run " + id);
      const auto& got = by_run[id];
      ASSERT_GE(got.size(), 2u);
      // Once each, in the run's order: what `events --run` reads from the record, event for event.
      EXPECT_EQ(got, recorded_events(id));
      EXPECT_EQ(got.front()["type"], "run.start");
      EXPECT_EQ(got.back()["type"], "run.end");
      const auto record = px::run::read_record(dir);
      ASSERT_TRUE(record);
      EXPECT_EQ(got.back()["status"], px::run::to_string(record.value().status));
      EXPECT_EQ(got.back()["exit_status"], record.value().exit_status.value_or(-1));
      EXPECT_EQ(got.front()["command"], record.value().command);
      // Every line of the proxy's log is one network event; the refusals are
      // those the record counts.
      std::size_t network = 0, refused = 0, recorded_refused = 0;
      for (const auto& e : got) {
        const std::string type = e["type"];
        network += type.rfind("network.", 0) == 0;
        refused += type == "network.refused";
      }
      for (const auto& r : record.value().refused) recorded_refused += r.count;
      EXPECT_EQ(network, line_count(dir / "proxy.jsonl"));
      EXPECT_EQ(refused, recorded_refused);
      EXPECT_GT(refused, 0u);
    }
  }

  fs::path root_;
  pid_t follower_ = -1;
};

TEST_F(EventsFollow, TenRunsAtOnceEveryDecisionOnceInOrderAsRecorded) {
  if (!can_seal()) GTEST_SKIP() << "no sealed run with its own network here";
  const fs::path out = root_ / "followed.jsonl";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  start_follower(fd);
  ::close(fd);
  runs_at_once(10, 5);
  // Every run's end reaches the follower.
  auto ends = [&] {
    std::size_t n = 0;
    for (const auto& e : json_lines(px::test::slurp(out))) n += e["type"] == "run.end";
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return ends() == 10; }, 20000)) << ends();
  stop_follower();
  expect_every_decision_once_in_order(json_lines(px::test::slurp(out)), 10);
}

TEST_F(EventsFollow, AStoppedReaderWithAFullPipeDoesNotSlowRunsAndLosesNothing) {
  if (!can_seal()) GTEST_SKIP() << "no sealed run with its own network here";
  const int runs = 5, lookups = 40;
  const double alone = runs_at_once(runs, lookups);
  for (const auto& d : run_dirs()) fs::remove_all(d);
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  start_follower(pipe_fds[1]);
  ::close(pipe_fds[1]);
  ASSERT_EQ(::kill(follower_, SIGSTOP), 0);
  const double stopped = runs_at_once(runs, lookups);
  std::printf(
      "[ timing ] %d runs of %d lookups at once: %.0f ms without a reader, %.0f ms with a stopped one\n",
      runs, lookups, alone, stopped);
  // Nothing of a run waits on the reader: the same work, within noise.
  EXPECT_LT(stopped, alone * 2 + 2000);
  // Let go, it catches up from the files: every event, nothing lost.
  std::mutex mu;
  std::string text;
  std::thread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) {
      std::lock_guard lock(mu);
      text.append(buf, static_cast<std::size_t>(n));
    }
  });
  ::kill(follower_, SIGCONT);
  const bool caught_up = wait_until(
      [&] {
        std::lock_guard lock(mu);
        std::size_t n = 0;
        for (auto at = text.find("\"run.end\""); at != std::string::npos;
             at = text.find("\"run.end\"", at + 1))
          ++n;
        return n == static_cast<std::size_t>(runs);
      },
      20000);
  EXPECT_TRUE(caught_up);
  ::kill(follower_, SIGTERM);
  ::waitpid(follower_, nullptr, 0);
  follower_ = -1;
  reader.join();
  ::close(pipe_fds[0]);
  expect_every_decision_once_in_order(json_lines(text), runs);
}

TEST_F(EventsFollow, KillSwitchActionsAreEventsAsTheyHappen) {
  if (!can_seal()) GTEST_SKIP() << "no sealed run with its own network here";
  std::thread run([&] {
    px::test::spawn_and_wait({PARALLEX_EXE, "run", "--in", (root_ / "work").string(), "--", "sleep", "60"},
                             env(), root_ / "out", std::chrono::seconds(120));
  });
  std::string id;
  ASSERT_TRUE(wait_until(
      [&] {
        const auto o = px::test::spawn_and_wait({PARALLEX_EXE, "runs", "--json"}, env(), root_ / "out");
        const auto j = json::parse(o.out, nullptr, false);
        if (j.is_discarded() || j["runs"].empty()) return false;
        id = j["runs"][0]["id"];
        return true;
      },
      20000));
  // Each action is in the run's events as soon as it is done, before the run ends.
  const std::vector<std::pair<std::string, std::string>> actions{
      {"pause", "killswitch.paused"}, {"resume", "killswitch.resumed"}, {"kill", "killswitch.killed"}};
  for (const auto& [action, type_name] : actions) {
    const std::string& type = type_name;  // a lambda below uses it: clang 14 captures no structured binding
    const auto o = px::test::spawn_and_wait({PARALLEX_EXE, action, id}, env(), root_ / "out");
    ASSERT_EQ(o.status, 0) << o.err;
    // (A kill ends the run at once: its end may follow already.)
    const auto events = recorded_events(id);
    const auto it =
        std::find_if(events.begin(), events.end(), [&](const json& e) { return e["type"] == type; });
    ASSERT_NE(it, events.end()) << action;
    EXPECT_EQ((*it)["by"], "parallex " + action + " " + id);
  }
  run.join();
  std::vector<std::string> types;
  for (const auto& e : recorded_events(id)) types.push_back(e["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"run.start", "killswitch.paused", "killswitch.resumed",
                                             "killswitch.killed", "run.end"}));
  const auto record = px::run::read_record(root_ / "data/runs" / id);
  ASSERT_TRUE(record);
  EXPECT_EQ(px::run::to_string(record.value().status), std::string("killed"));
  EXPECT_EQ(recorded_events(id).back()["status"], "killed");
}

TEST_F(EventsFollow, AFileMovedAsideIsAnEventWhileTheRunGoesOn) {
  if (!can_seal()) GTEST_SKIP() << "no sealed run with its own network here";
  const auto o = px::test::spawn_and_wait(
      {PARALLEX_EXE, "run", "--in", (root_ / "work").string(), "--", "sh", "-c", "echo x > .envrc; sleep 1"},
      env(), root_ / "out");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto dirs = run_dirs();
  ASSERT_EQ(dirs.size(), 1u);
  const auto events = recorded_events(dirs[0].filename());
  const auto moved = std::find_if(events.begin(), events.end(),
                                  [](const json& e) { return e["type"] == "file.moved_aside"; });
  ASSERT_NE(moved, events.end());
  EXPECT_EQ((*moved)["path"], (root_ / "work/.envrc").string());
  EXPECT_EQ((*moved)["when"], "during the run");
  // Written when it was moved, before the run's end, and once.
  EXPECT_EQ(events.back()["type"], "run.end");
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const json& e) { return e["type"] == "file.moved_aside"; }),
            1);
  const auto record = px::run::read_record(dirs[0]);
  ASSERT_TRUE(record);
  ASSERT_EQ(record.value().quarantined.size(), 1u);
  EXPECT_EQ((*moved)["moved_to"], record.value().quarantined[0].moved_to.string());
}

TEST_F(EventsFollow, BadInputIsRefusedSayingWhatToDo) {
  auto events = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv{PARALLEX_EXE, "events"};
    argv.insert(argv.end(), args.begin(), args.end());
    return px::test::spawn_and_wait(argv, env(), root_ / "out", std::chrono::seconds(30));
  };
  auto o = events({"--run", "../etc"});
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("is not a run id"), std::string::npos) << o.err;
  o = events({"--run", "20261206-000000-0000"});
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("There is no run 20261206-000000-0000"), std::string::npos) << o.err;
  o = events({"--agent", "nosuch"});
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("There is no agent named nosuch"), std::string::npos) << o.err;
  o = events({"--agent", "../x"});
  EXPECT_NE(o.status, 0);
  o = events({"--since", "yesterday-ish"});
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("yesterday-ish"), std::string::npos) << o.err;
  // No runs yet: nothing, and no error.
  o = events({});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "");
}

}  // namespace
