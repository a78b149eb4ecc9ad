// A page a sealed run asks to open (docs/opener.md): `xdg-open` and Python's
// webbrowser inside a real seal hand the address to the supervisor, which
// prints it whole on the run's terminal (escaped) and records it (the event,
// run.json); no browser starts. Offline too, and a flood is bounded. As root
// and as the unprivileged user.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scratch.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"
#include "unprivileged_user.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Opener : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "px-opener-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "data", "runtime", "work", "out", "fakebin"})
      fs::create_directories(root_ / d);
    ::chmod((root_ / "runtime").c_str(), 0700);
    // Browsers that would leave a mark if anything started one.
    for (const char* b :
         {"xdg-open", "firefox", "www-browser", "x-www-browser", "sensible-browser", "chromium"}) {
      const fs::path f = root_ / "fakebin" / b;
      std::ofstream(f) << "#!/bin/sh\ntouch " << (root_ / "work" / "BROWSER-STARTED").string() << "\n";
      ::chmod(f.c_str(), 0755);
    }
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }
  std::vector<std::string> env() const {
    return {"HOME=" + (root_ / "home").string(),
            "PATH=" + (root_ / "fakebin").string() + ":/usr/local/bin:/usr/bin:/bin",
            "LANG=C.UTF-8",
            "PARALLEX_HOME=" + (root_ / "data").string(),
            "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
            "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
  }
  px::test::Outcome run(const std::vector<std::string>& flags, const std::string& script) {
    std::vector<std::string> argv{PARALLEX_EXE, "run", "--in", (root_ / "work").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "sh", "-c", script});
    return px::test::spawn_and_wait(argv, env(), root_ / "out", std::chrono::seconds(120));
  }
  // The run's record folder (a test of one ad-hoc run).
  fs::path last_run() const {
    fs::path found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_ / "data", ec);
         it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->path().filename() == "run.json") found = it->path();
    return found.parent_path();
  }
  // Every run's events of `type` (the runs of one test), in time order.
  std::vector<json> events(const std::string& type) const {
    std::vector<json> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root_ / "data", ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename() != "events.jsonl") continue;
      std::ifstream in(it->path());
      for (std::string line; std::getline(in, line);)
        if (auto j = json::parse(line, nullptr, false); !j.is_discarded() && j.value("type", "") == type)
          out.push_back(j);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const json& a, const json& b) { return a.value("time", "") < b.value("time", ""); });
    return out;
  }
  json record() const { return json::parse(px::test::slurp(last_run() / "run.json")); }
  bool browser_started() const { return fs::exists(root_ / "work" / "BROWSER-STARTED"); }

  fs::path root_;
};

void as_user_too(const char* test) {
  if (::getuid() != 0 || std::getenv("PX_OPENER_AS_USER")) return;
  const auto user = px::test::unprivileged_user();
  if (!user) GTEST_SKIP() << "the unprivileged user could not be had";
  const auto pass = px::test::rerun_self_as(*user, std::string("Opener.") + test, "PX_OPENER_AS_USER");
  EXPECT_TRUE(pass.passed()) << pass.output;
}

TEST_F(Opener, XdgOpenAndPythonWebbrowserAreShownAndRecordedNotOpened) {
  const std::string py = "https://example.org/device?user_code=WXYZ-1234&x=1";
  const auto o = run({},
                     "xdg-open https://example.org/x && echo xdg=$? && "
                     "python3 -c 'import webbrowser, sys; print(\"py\", webbrowser.open(sys.argv[1]))' '" +
                         py + "' && echo \"BROWSER=$BROWSER\"");
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("xdg=0"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("py True"), std::string::npos) << o.out;  // taken: webbrowser tries no other
  // The whole address on the run's terminal, marked outside the rule.
  EXPECT_NE(o.err.find("the run asked to open https://example.org/x "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("the run asked to open " + py + " "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("example.org is outside the run's network rule"), std::string::npos) << o.err;
  EXPECT_FALSE(browser_started());
  const auto ev = events("run.open_requested");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["url"], "https://example.org/x");
  EXPECT_EQ(ev[0]["by"], "xdg-open");
  EXPECT_EQ(ev[0]["in_rule"], false);
  EXPECT_EQ(ev[1]["url"], py);
  EXPECT_EQ(ev[1]["host"], "example.org");
  EXPECT_NE(ev[1].value("process", "").find("python3"), std::string::npos) << ev[1].dump();
  const json r = record();
  ASSERT_TRUE(r.contains("open_requests")) << r.dump(2);
  ASSERT_EQ(r["open_requests"]["requests"].size(), 2u);
  EXPECT_EQ(r["open_requests"]["requests"][1]["url"], py);
  EXPECT_EQ(r["open_requests"]["refused"], 0);
  // `parallex events` shows it, whole.
  const auto shown = px::test::spawn_and_wait({PARALLEX_EXE, "events"}, env(), root_ / "out");
  EXPECT_NE(shown.out.find("run.open_requested " + py), std::string::npos) << shown.out;
  as_user_too("XdgOpenAndPythonWebbrowserAreShownAndRecordedNotOpened");
}

// No proxy is needed: an offline run hands its address over too; a host the
// rule allows is not marked.
TEST_F(Opener, OfflineRunAndAllowedHost) {
  auto o =
      run({"--offline"}, "sensible-browser https://offline.example/login; www-browser https://b.example/");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("the run asked to open https://offline.example/login "), std::string::npos) << o.err;
  EXPECT_EQ(events("run.open_requested").size(), 2u);
  o = run({"--allow", "allowed.example"}, "x-www-browser https://allowed.example/page");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto ev = events("run.open_requested");
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[2]["url"], "https://allowed.example/page");
  EXPECT_EQ(ev[2]["in_rule"], true);
  EXPECT_EQ(o.err.find("outside the run's network rule"), std::string::npos) << o.err;
  EXPECT_FALSE(browser_started());
  as_user_too("OfflineRunAndAllowedHost");
}

// The mark follows the live rule: a host allowed while the run goes on
// (`parallex allow --run`, docs/ask.md) is inside it, as the proxy would let
// a connection to it through, though the run started without it.
TEST_F(Opener, AHostAllowedLiveIsInTheRule) {
  const fs::path go = root_ / "work" / "go";
  auto running = std::async(std::launch::async, [&] {
    return run({"--allow", "first.example"},
               "i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
               "xdg-open https://later.example/login; xdg-open https://never.example/");
  });
  std::string id;
  for (int i = 0; i < 300 && id.empty(); ++i) {
    const auto listed = px::test::spawn_and_wait({PARALLEX_EXE, "runs", "--json"}, env(), root_ / "out");
    const auto j = json::parse(listed.out, nullptr, false);
    if (j.is_object() && j.contains("runs") && !j["runs"].empty()) id = j["runs"][0].value("id", "");
    if (id.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(id.empty()) << "the run never showed in `parallex runs`";
  if (!id.empty()) {
    const auto allowed =
        px::test::spawn_and_wait({PARALLEX_EXE, "allow", "--run", id, "later.example"}, env(), root_ / "out");
    EXPECT_EQ(allowed.status, 0) << allowed.out << allowed.err;
  }
  std::ofstream(go) << "go\n";
  const auto o = running.get();
  ASSERT_EQ(o.status, 0) << o.err;
  const auto ev = events("run.open_requested");
  ASSERT_EQ(ev.size(), 2u) << o.err;
  EXPECT_EQ(ev[0]["host"], "later.example");
  EXPECT_EQ(ev[0]["in_rule"], true) << ev[0].dump();
  EXPECT_EQ(ev[1]["host"], "never.example");
  EXPECT_EQ(ev[1]["in_rule"], false) << ev[1].dump();
  EXPECT_EQ(o.err.find("later.example is outside"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("never.example is outside the run's network rule"), std::string::npos) << o.err;
  const json r = record();
  ASSERT_EQ(r["open_requests"]["requests"].size(), 2u) << r.dump(2);
  EXPECT_EQ(r["open_requests"]["requests"][0]["in_rule"], true);
  as_user_too("AHostAllowedLiveIsInTheRule");
}

// An address is data: its escape sequences reach the terminal as \xNN.
TEST_F(Opener, EscapeSequencesArePrintedEscaped) {
  const auto o = run({},
                     "xdg-open \"$(printf 'https://e.example/\\033]0;pwned\\007\\033[2Jx\\nforged line')\"; "
                     "xdg-open \"$(printf 'https://forged\\nline.example/')\"");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err.find('\033'), std::string::npos) << "a raw ESC reached the terminal";
  EXPECT_EQ(o.err.find('\007'), std::string::npos);
  EXPECT_NE(o.err.find("https://e.example/\\x1b]0;pwned\\x07\\x1b[2Jx\\nforged line"), std::string::npos)
      << o.err;
  // The host a line names is the address's too: escaped.
  EXPECT_EQ(o.err.find("forged\nline"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("(forged\\nline.example is outside"), std::string::npos) << o.err;
  const auto ev = events("run.open_requested");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["url"], "https://e.example/\033]0;pwned\007\033[2Jx\nforged line");
  as_user_too("EscapeSequencesArePrintedEscaped");
}

// A flood: a burst is shown, the rest counted; too long is refused, not cut.
TEST_F(Opener, AFloodIsBounded) {
  const auto o =
      run({},
          "i=0; while [ $i -lt 200 ]; do xdg-open https://flood.example/$i 2>/dev/null; "
          "i=$((i+1)); done; xdg-open https://long.example/$(head -c 3000 /dev/zero | tr '\\0' a); "
          "echo long=$?");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("long=1"), std::string::npos) << o.out;
  const json r = record();
  const auto taken = r["open_requests"]["requests"].size();
  const auto refused = r["open_requests"]["refused"].get<std::uint64_t>();
  EXPECT_GE(taken, 5u);
  EXPECT_LE(taken, 20u) << "the burst and one every two seconds";
  EXPECT_EQ(taken + refused, 201u);
  EXPECT_EQ(events("run.open_requested").size(), taken);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = o.err.find("the run asked to open", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, taken);
}

// Every run command has it: an agent's run, a workspaced tab, an agent's tab.
TEST_F(Opener, AgentAndWorkspacedRunsHaveItToo) {
  const std::string work = (root_ / "work").string();
  ASSERT_EQ(px::test::spawn_and_wait({"git", "-C", work, "init", "-q"}, env(), root_ / "out").status, 0);
  ASSERT_EQ(px::test::spawn_and_wait({"git", "-C", work, "-c", "user.email=t@example.com", "-c",
                                      "user.name=t", "commit", "-q", "--allow-empty", "-m", "init"},
                                     env(), root_ / "out")
                .status,
            0);
  auto o = px::test::spawn_and_wait({PARALLEX_EXE, "agent", "new", "opener-test", "--email", "o@example.com"},
                                    env(), root_ / "out");
  ASSERT_EQ(o.status, 0) << o.err;
  const std::string in = "cd '" + work + "' && " + PARALLEX_EXE;
  const std::vector<std::pair<std::string, std::string>> commands{
      {in + " agent run opener-test -- sh -c 'xdg-open \"$0\"' ", "https://agent.example/a"},
      {in + " harness -w -- sh -c 'xdg-open \"$0\"' ", "https://tab.example/b"},
      {in + " agent -w opener-test -- sh -c 'xdg-open \"$0\"' ", "https://agenttab.example/c"}};
  for (const auto& [command, url] : commands) {
    o = px::test::spawn_and_wait({"sh", "-c", command + url}, env(), root_ / "out");
    EXPECT_EQ(o.status, 0) << command << ": " << o.err;
    EXPECT_NE(o.err.find("the run asked to open " + url + " "), std::string::npos)
        << command << ": " << o.err;
  }
  const auto all = px::test::spawn_and_wait({PARALLEX_EXE, "events", "--json"}, env(), root_ / "out");
  std::size_t seen = 0;
  for (const auto& [command, url] : commands)
    if (all.out.find("\"url\":\"" + url + "\"") != std::string::npos) ++seen;
  EXPECT_EQ(seen, commands.size()) << all.out;
  EXPECT_FALSE(browser_started());
}

}  // namespace
