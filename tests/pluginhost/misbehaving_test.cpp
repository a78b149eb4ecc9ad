// A plugin's crash, abort, exit or hang never reaches the host: each is said
// naming the plugin and the callback, the other plugins go on, and a command
// stops (exit 125) only where the broken plugin is the harness it runs. Each
// case is a real shared library (bad_plugins/misbehaving.cpp), first through
// the plugin set, then through the real executable, as root and as pxtest.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bad_plugins.hpp"
#include "pluginhost/plugin_set.hpp"
#include "policy/compose.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"
#include "unprivileged_user.hpp"

namespace fs = std::filesystem;
using namespace px;
using namespace px::pluginhost;
using px::test::bad;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The environment of one case, restored after it.
class Env {
 public:
  Env(std::initializer_list<std::pair<const char*, std::string>> vars) : vars_(vars.begin(), vars.end()) {
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~Env() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

// What each way of failing is said as.
std::string expected(const std::string& how) {
  if (how == "crash") return "crashed in";
  if (how == "abort") return "crashed in";
  if (how == "exit") return "ended the plugins' process in";
  return "did not answer within 1 s in";
}

std::string signal_of(const std::string& how) {
  if (how == "crash") return "SIGSEGV";
  if (how == "abort") return "SIGABRT";
  if (how == "exit") return "exit status 3";
  return "PARALLEX_PLUGIN_TIMEOUT";
}

}  // namespace

class Misbehaving : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

// The plugin fails in one callback; the host gets an error naming it and
// the callback, and greedy (loaded beside it, in the same process before the
// failure) still answers, from a new process.
TEST_P(Misbehaving, IsNamedAndTheOthersGoOn) {
  const auto [how, where] = GetParam();
  Env env({{"MISBEHAVE", std::string(how) + ":" + where},
           {"PARALLEX_PLUGIN_TIMEOUT", "1"},
           {"GREEDY_MODE", "fine"}});
  auto set = PluginSet::load({bad("misbehaving"), bad("greedy")});
  ASSERT_EQ(set.plugins().size(), 2u) << (set.failures().empty() ? "" : set.failures().front().reason);
  const LoadedPlugin* plugin = set.find("misbehaving");
  ASSERT_NE(plugin, nullptr);
  const CommandLine command{{"misbehave"}, "", ""};
  const auto started = std::chrono::steady_clock::now();
  Status result = ok();
  const std::string stage = where;
  if (stage == "detect") {
    if (auto r = plugin->detect(command); !r) result = r.error();
  } else if (stage == "contribute") {
    if (auto r = plugin->contribute(policy::Platform::linux_host, "/h", "/h", "/r", &command); !r)
      result = r.error();
  } else if (stage == "project_files") {
    if (auto r = plugin->project_files(); !r) result = r.error();
  } else {
    if (auto r = plugin->home_files(policy::Platform::linux_host); !r) result = r.error();
  }
  ASSERT_FALSE(result) << how << " in " << where << " was not noticed";
  const std::string& m = result.error().message;
  EXPECT_TRUE(has(m, "plugin misbehaving")) << m;
  EXPECT_TRUE(has(m, expected(how) + " " + where)) << m;
  EXPECT_TRUE(has(m, signal_of(how))) << m;
  // Bounded: the time limit and a new process, not the test's own timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  // Broken for the rest of the command: said once among the set's problems,
  // its next call fails at once, and detection across the set leaves it out.
  ASSERT_TRUE(plugin->broken());
  const auto problems = set.problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems.front(), m);
  EXPECT_FALSE(plugin->detect(command));
  // The other plugin answers, from a process of its own.
  const LoadedPlugin* greedy = set.find("greedy");
  ASSERT_NE(greedy, nullptr);
  auto claims = set.claims({{"greedy"}, "", ""});
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims.front().plugin, greedy);
  auto contributed = greedy->contribute(policy::Platform::linux_host, "/h", "/h", "/r", nullptr);
  ASSERT_TRUE(contributed) << contributed.error().message;
  EXPECT_FALSE(contributed.value().paths.empty());
}

INSTANTIATE_TEST_SUITE_P(
    EachWayAndCallback, Misbehaving,
    ::testing::Values(std::pair{"crash", "detect"}, std::pair{"abort", "detect"}, std::pair{"hang", "detect"},
                      std::pair{"exit", "detect"}, std::pair{"crash", "contribute"},
                      std::pair{"abort", "contribute"}, std::pair{"hang", "contribute"},
                      std::pair{"crash", "project_files"}, std::pair{"hang", "project_files"},
                      std::pair{"crash", "home_files"}, std::pair{"abort", "home_files"}),
    [](const auto& p) { return std::string(p.param.first) + "_" + p.param.second; });

// A transcript's sessions come from the plugins' process as parts of the
// answer (megabytes each, not CBOR): all of them, in the plugin's order, with
// its warnings. A plugin that writes the socket itself, parts and then an
// answer that takes none, is stopped and named, and the host goes on.
TEST(MisbehavingTranscripts, SessionsComeWholeInOrderAndForgedPartsAreRefused) {
  {
    Env env({{"MISBEHAVE_TRANSCRIPTS", "1"}});
    auto set = PluginSet::load({bad("misbehaving")});
    const LoadedPlugin* plugin = set.find("misbehaving");
    ASSERT_NE(plugin, nullptr) << (set.failures().empty() ? "" : set.failures().front().reason);
    std::vector<std::string> paths;
    for (int i = 0; i < 300; ++i) paths.push_back("/t/" + std::to_string(i) + std::string(i * 100, 'x'));
    auto parsed = plugin->parse_transcripts(paths, 0, 0);
    ASSERT_TRUE(parsed) << parsed.error().message;
    ASSERT_EQ(parsed.value().sessions.size(), paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i)
      EXPECT_EQ(parsed.value().sessions[i], "{\"session_id\":\"" + paths[i] + "\"}") << i;
    ASSERT_EQ(parsed.value().warnings.size(), 1u);
    EXPECT_EQ(parsed.value().warnings[0].second, "nothing there");
    // Read again, not answered from memory: transcripts change.
    auto again = plugin->parse_transcripts({"/t/other"}, 0, 0);
    ASSERT_TRUE(again) << again.error().message;
    ASSERT_EQ(again.value().sessions.size(), 1u);
  }
  Env env(
      {{"MISBEHAVE_TRANSCRIPTS", "1"}, {"MISBEHAVE", "forge:parse_transcripts"}, {"GREEDY_MODE", "fine"}});
  auto set = PluginSet::load({bad("misbehaving"), bad("greedy")});
  const LoadedPlugin* plugin = set.find("misbehaving");
  ASSERT_NE(plugin, nullptr) << (set.failures().empty() ? "" : set.failures().front().reason);
  auto parsed = plugin->parse_transcripts({"/t/one"}, 0, 0);
  ASSERT_FALSE(parsed) << "a forged answer was taken";
  EXPECT_TRUE(
      has(parsed.error().message, "plugin misbehaving sent text parts with an answer that takes none"))
      << parsed.error().message;
  EXPECT_TRUE(plugin->broken());
  const LoadedPlugin* greedy = set.find("greedy");
  ASSERT_NE(greedy, nullptr);
  EXPECT_TRUE(greedy->contribute(policy::Platform::linux_host, "/h", "/h", "/r", nullptr));
}

// With a sink, each session goes to it as it arrives, in order, and none is
// kept; a crash after some were sent leaves those with the sink, and the
// call fails naming the crash.
TEST(MisbehavingTranscripts, SessionsGoToTheSinkAsTheyArriveUntilACrash) {
  Env env({{"MISBEHAVE_TRANSCRIPTS", "1"}});
  auto set = PluginSet::load({bad("misbehaving")});
  const LoadedPlugin* plugin = set.find("misbehaving");
  ASSERT_NE(plugin, nullptr) << (set.failures().empty() ? "" : set.failures().front().reason);
  std::vector<std::string> paths, got;
  for (int i = 0; i < 300; ++i) paths.push_back("/t/" + std::to_string(i) + std::string(i * 100, 'x'));
  const auto sink = [&](std::string_view s) { got.emplace_back(s); };
  auto parsed = plugin->parse_transcripts(paths, 0, 0, sink);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed.value().sessions.empty());
  ASSERT_EQ(parsed.value().warnings.size(), 1u);
  ASSERT_EQ(got.size(), paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i)
    EXPECT_EQ(got[i], "{\"session_id\":\"" + paths[i] + "\"}") << i;
  got.clear();
  auto crashed = plugin->parse_transcripts({"/t/a", "/t/b", "/t/crash", "/t/c"}, 0, 0, sink);
  ASSERT_FALSE(crashed);
  EXPECT_TRUE(has(crashed.error().message, "plugin misbehaving crashed in parse_transcripts"))
      << crashed.error().message;
  EXPECT_EQ(got, (std::vector<std::string>{"{\"session_id\":\"/t/a\"}", "{\"session_id\":\"/t/b\"}"}));
  EXPECT_TRUE(plugin->broken());
}

// A crash while loading (its constructor runs at the entry point) leaves the
// plugin out, naming the file; the plugins after it load.
TEST(MisbehavingLoad, ACrashInTheConstructorLeavesItOutNamingTheFile) {
  Env env({{"MISBEHAVE", "crash:constructor"}, {"PARALLEX_PLUGIN_TIMEOUT", "1"}});
  auto set = PluginSet::load({bad("misbehaving"), bad("greedy")});
  ASSERT_EQ(set.plugins().size(), 1u);
  EXPECT_EQ(set.plugins().front()->name(), "greedy");
  ASSERT_EQ(set.failures().size(), 1u);
  const std::string& m = set.failures().front().reason;
  EXPECT_TRUE(has(m, "misbehaving.so")) << m;
  EXPECT_TRUE(has(m, "crashed while being loaded")) << m;
  EXPECT_TRUE(has(m, "SIGSEGV")) << m;
  auto claims = set.claims({{"greedy"}, "", ""});
  EXPECT_EQ(claims.size(), 1u);
}

// A throwing constructor: its message reaches the user (ABI 1.5's entry error).
TEST(MisbehavingLoad, AThrowingConstructorIsSaidWithItsMessage) {
  Env env({{"MISBEHAVE", "throw:constructor"}});
  auto set = PluginSet::load({bad("misbehaving")});
  ASSERT_EQ(set.failures().size(), 1u);
  const std::string& m = set.failures().front().reason;
  EXPECT_TRUE(has(m, "misbehaving.so")) << m;
  EXPECT_TRUE(has(m, "constructor threw: constructor failed on purpose")) << m;
}

// Scratch (each run's own, dropped at its end) is for a folder or a file
// taken whole: a JSON file declared so (its keys could not be told apart) is
// refused with the plugin, the path and the rule named.
TEST(MisbehavingHomeFiles, AJsonFileDeclaredScratchIsRefusedNamingIt) {
  Env env({{"MISBEHAVE", "scratch-file:home_files"}});
  auto set = PluginSet::load({bad("misbehaving")});
  const LoadedPlugin* plugin = set.find("misbehaving");
  ASSERT_NE(plugin, nullptr);
  auto declared = plugin->home_files(policy::Platform::linux_host);
  ASSERT_FALSE(declared) << "a scratch file was taken";
  const std::string& m = declared.error().message;
  EXPECT_TRUE(has(m, "misbehaving")) << m;
  EXPECT_TRUE(has(m, "~/.misbehaving.json")) << m;
  EXPECT_TRUE(has(m, "scratch is a folder or a file taken whole")) << m;
}

// ---- through the real executable -------------------------------------------------------

namespace {

class Folder {
 public:
  Folder() {
    char templ[] = "/tmp/px-misbehaving-XXXXXX";
    if (::mkdtemp(templ) == nullptr) return;
    root_ = templ;
    for (const char* d : {"home", "userhome", "runtime", "work", "logs"}) {
      fs::create_directories(root_ / d);
      fs::permissions(root_ / d, fs::perms::owner_all);
    }
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  const fs::path& root() const { return root_; }

  // `parallex ARGS` in the work folder, the shipped plugins and `plugin_dirs` loaded.
  test::Outcome parallex(const std::vector<std::string>& args, const std::vector<std::string>& plugin_dirs,
                         const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv{
        "/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", (root_ / "work").string(), PARALLEX_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string path;
    for (const auto& d : plugin_dirs) path += (path.empty() ? "" : ":") + d;
    std::vector<std::string> env{
        "PARALLEX_HOME=" + (root_ / "home").string(), "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
        "HOME=" + (root_ / "userhome").string(), "PARALLEX_PLUGIN_PATH=" + path, "PARALLEX_PLUGIN_TIMEOUT=2"};
    env.insert(env.end(), extra.begin(), extra.end());
    return test::spawn_and_wait(argv, env, root_ / "logs", std::chrono::seconds(90));
  }

 private:
  fs::path root_;
};

// Runs left in the private state: a run that could not start leaves none.
int private_runs(const fs::path& home) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(home, ec))
    if (e.path().filename().string().rfind("run-", 0) == 0 &&
        e.path().parent_path().filename() == "runs-private")
      ++n;
  return n;
}

}  // namespace

// A crash or a hang in a plugin that is not the run's harness: the command
// runs, and one line names the plugin and the callback.
TEST(MisbehavingExecutable, ACrashOrHangInAnotherPluginsDetectDoesNotStopARun) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  for (const char* how : {"crash", "abort", "hang"}) {
    const auto r = f.parallex({"run", "--", "sh", "-c", "echo ran"}, {bad("misbehaving").string()},
                              {"MISBEHAVE=" + std::string(how) + ":detect"});
    EXPECT_EQ(r.status, 0) << how << ": " << r.err;
    EXPECT_TRUE(has(r.out, "ran")) << how << ": " << r.out;
    EXPECT_TRUE(has(r.err, "plugin misbehaving")) << how << ": " << r.err;
    EXPECT_TRUE(has(r.err, " in detect")) << how << ": " << r.err;
    // `detect` says it too, and still answers.
    const auto d = f.parallex({"detect", "--", "claude"}, {bad("misbehaving").string()},
                              {"MISBEHAVE=" + std::string(how) + ":detect"});
    EXPECT_EQ(d.status, 0) << how << ": " << d.err;
    EXPECT_TRUE(has(d.out, "claude-code")) << how << ": " << d.out;
    EXPECT_TRUE(has(d.err, "plugin misbehaving")) << how << ": " << d.err;
  }
}

// The run's own harness crashes in contribute: it cannot go on (exit 125,
// nothing ran, no record left behind), and says which plugin and where.
TEST(MisbehavingExecutable, TheHarnessCrashingStopsItsRunWith125) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  for (const char* how : {"crash", "hang"}) {
    const auto r =
        f.parallex({"run", "--harness", "misbehaving", "--", "sh", "-c", "echo ran"},
                   {bad("misbehaving").string()}, {"MISBEHAVE=" + std::string(how) + ":contribute"});
    EXPECT_EQ(r.status, 125) << how << ": " << r.err;
    EXPECT_FALSE(has(r.out, "ran")) << how;
    EXPECT_TRUE(has(r.err, "plugin misbehaving")) << how << ": " << r.err;
    EXPECT_TRUE(has(r.err, " in contribute")) << how << ": " << r.err;
    EXPECT_EQ(private_runs(f.root() / "home"), 0) << how;
    // Another harness's run is not touched by it.
    const auto other = f.parallex({"run", "--", "sh", "-c", "echo ran"}, {bad("misbehaving").string()},
                                  {"MISBEHAVE=" + std::string(how) + ":contribute"});
    EXPECT_EQ(other.status, 0) << how << ": " << other.err;
    EXPECT_TRUE(has(other.out, "ran")) << how;
  }
}

// Project files are asked of every plugin for every run: one plugin's
// failure there leaves its files out of other harnesses' runs, said.
TEST(MisbehavingExecutable, AFailingProjectFilesOfAnotherPluginDoesNotStopARun) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  for (const char* how : {"throw", "crash"}) {
    const auto r = f.parallex({"run", "--", "sh", "-c", "echo ran"}, {bad("misbehaving").string()},
                              {"MISBEHAVE=" + std::string(how) + ":project_files"});
    EXPECT_EQ(r.status, 0) << how << ": " << r.err;
    EXPECT_TRUE(has(r.out, "ran")) << how;
    EXPECT_TRUE(has(r.err, "plugin misbehaving")) << how << ": " << r.err;
    EXPECT_TRUE(has(r.err, "project_files")) << how << ": " << r.err;
    const auto own =
        f.parallex({"run", "--harness", "misbehaving", "--", "sh", "-c", "echo ran"},
                   {bad("misbehaving").string()}, {"MISBEHAVE=" + std::string(how) + ":project_files"});
    EXPECT_EQ(own.status, 125) << how << ": " << own.err;
    EXPECT_FALSE(has(own.out, "ran")) << how;
  }
}

// A plugin that did not load is said by detect, run and policy show: a
// missing claim is never taken for `generic` in silence.
TEST(MisbehavingExecutable, LoadFailuresAreSaidWhereTheyMatter) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  for (const auto& args : std::vector<std::vector<std::string>>{{"detect", "--", "/bin/true"},
                                                                {"run", "--", "/bin/true"},
                                                                {"policy", "show", "--", "/bin/true"}}) {
    const auto r = f.parallex(args, {bad("wrong_major").string()});
    EXPECT_EQ(r.status, 0) << args.front() << ": " << r.err;
    EXPECT_TRUE(has(r.err, "wrong_major.so")) << args.front() << ": " << r.err;
    EXPECT_TRUE(has(r.err, "ABI 2.0")) << args.front() << ": " << r.err;
    const auto missing = f.parallex(args, {(f.root() / "no-such-folder").string()});
    EXPECT_EQ(missing.status, 0) << args.front() << ": " << missing.err;
    EXPECT_TRUE(has(missing.err, "PARALLEX_PLUGIN_PATH names")) << args.front() << ": " << missing.err;
    EXPECT_TRUE(has(missing.err, "does not exist")) << args.front() << ": " << missing.err;
  }
}

// A plugin naming `.git` as a project file: refused, and every sealed git
// commit still works (it made every commit fail with a read-only index.lock).
TEST(MisbehavingExecutable, GitIsNoPluginsProjectFile) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  const std::string work = (f.root() / "work").string();
  ASSERT_EQ(test::spawn_and_wait({"git", "-C", work, "init", "-q"}, {}, f.root() / "logs").status, 0);
  // Who commits, where the sealed git reads it (the run does not get GIT_* from here).
  for (const auto& [key, value] : {std::pair{"user.name", "t"}, std::pair{"user.email", "t@example.com"}})
    ASSERT_EQ(test::spawn_and_wait({"git", "-C", work, "config", key, value}, {}, f.root() / "logs").status,
              0);
  const std::vector<std::string> env{"GREEDY_PROJECT_FILE=.git", "GREEDY_MODE=fine"};
  const auto r = f.parallex({"run", "--", "git", "commit", "-q", "--allow-empty", "-m", "sealed"},
                            {bad("greedy").string()}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "plugin greedy's project_files gave the project file \".git\"")) << r.err;
  const auto log = test::spawn_and_wait({"git", "-C", work, "log", "--format=%s"}, {}, f.root() / "logs");
  EXPECT_TRUE(has(log.out, "sealed")) << log.out << log.err;
  // As the harness of the run, the refusal is its run's error.
  const auto own =
      f.parallex({"run", "--harness", "greedy", "--", "/bin/true"}, {bad("greedy").string()}, env);
  EXPECT_EQ(own.status, 125) << own.err;
  EXPECT_TRUE(has(own.err, "git's own")) << own.err;
}

// A plugin asking for the machine's /tmp: refused, and the file there untouched.
TEST(MisbehavingExecutable, TheMachinesTmpIsNoPluginsToGrant) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  const fs::path victim = "/tmp/victim";
  const bool existed = fs::exists(victim);
  const auto r =
      f.parallex({"run", "--harness", "greedy", "--", "sh", "-c", "echo planted > /tmp/victim; echo ran"},
                 {bad("greedy").string()}, {"GREEDY_MODE=tmp"});
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_FALSE(has(r.out, "ran"));
  EXPECT_TRUE(has(r.err, "shared temp dir")) << r.err;
  if (!existed) {
    EXPECT_FALSE(fs::exists(victim));
  }
}

TEST(MisbehavingUnprivileged, AsUnprivilegedUser) {
  if (::getuid() != 0) GTEST_SKIP() << "already unprivileged: this whole run is the unprivileged pass";
  if (std::getenv("PX_MISBEHAVING_CHILD")) GTEST_SKIP() << "nested";
  const auto user = test::unprivileged_user();
  if (!user) GTEST_SKIP() << "cannot create the unprivileged user pxtest (useradd failed)";
  const test::Pass pass = test::rerun_self_as(
      *user, "MisbehavingExecutable.*:MisbehavingLoad.*:PluginStateFile.*", "PX_MISBEHAVING_CHILD");
  std::printf("---- as %s (uid %u), %d skip lines ----\n%s---- end ----\n", user->name.c_str(), user->uid,
              pass.inner_skips, pass.output.c_str());
  EXPECT_TRUE(pass.passed()) << "the unprivileged pass failed (status " << pass.status << ")";
}

// A state file a plugin declares (greedy's ~/.greedy.json) that does not
// exist in the user's fresh home: a real sealed run can create it, and it is
// there for the next run, 0600 whatever mode the run gave it; a run that
// does not write it leaves nothing, and nothing written beside it reaches the home.
TEST(PluginStateFile, AMissingOneInTheUsersHomeIsMadeByTheRunAndKept) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  const fs::path state = f.root() / "userhome/.greedy.json";
  const std::vector<std::string> greedy{bad("greedy").string()};
  const std::vector<std::string> fine{"GREEDY_MODE=fine"};
  const auto idle = f.parallex(
      {"run", "--harness", "greedy", "--", "sh", "-c", "test -e ~/.greedy.json; echo seen=$?"}, greedy, fine);
  ASSERT_EQ(idle.status, 0) << idle.err;
  EXPECT_TRUE(has(idle.out, "seen=0")) << "the run sees the file it may write: " << idle.out;
  EXPECT_FALSE(fs::exists(state)) << "a run that did not write it leaves none";

  const auto first = f.parallex({"run", "--harness", "greedy", "--", "sh", "-c",
                                 "echo one >> ~/.greedy.json && chmod 755 ~/.greedy.json; "
                                 "echo x > ~/.greedy.json.tmp; true"},
                                greedy, fine);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_TRUE(has(first.err, "kept what the run wrote to " + state.string())) << first.err;
  ASSERT_TRUE(fs::is_regular_file(state)) << first.err;
  EXPECT_EQ(fs::status(state).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_FALSE(fs::exists(f.root() / "userhome/.greedy.json.tmp"));

  const auto second = f.parallex(
      {"run", "--harness", "greedy", "--", "sh", "-c", "cat ~/.greedy.json; echo two >> ~/.greedy.json"},
      greedy, fine);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_TRUE(has(second.out, "one")) << second.out << second.err;
  std::ifstream in(state);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "one\ntwo\n");
}

// `parallex transcripts --json` prints each session as it arrives: one that is
// not JSON is skipped with why, and when the plugin crashes after some, the
// array of those is whole and the command fails naming the crash.
TEST(MisbehavingExecutable, TranscriptsKeepsItsArrayWholeWhenThePluginCrashes) {
  Folder f;
  ASSERT_FALSE(f.root().empty());
  const std::vector<std::string> dirs{bad("misbehaving").string()};
  const std::vector<std::string> env{"MISBEHAVE_TRANSCRIPTS=1"};
  const auto ids = [](const std::string& out) {
    std::vector<std::string> found;
    const auto array = nlohmann::json::parse(out, nullptr, false);
    if (!array.is_array()) return std::vector<std::string>{"not an array: " + out};
    for (const auto& s : array) found.push_back(s.value("session_id", "?"));
    return found;
  };
  const auto skipped = f.parallex(
      {"transcripts", "--harness", "misbehaving", "--json", "/t/a", "/t/not-json", "/t/b"}, dirs, env);
  EXPECT_EQ(skipped.status, 0) << skipped.err;
  EXPECT_EQ(ids(skipped.out), (std::vector<std::string>{"/t/a", "/t/b"}));
  EXPECT_TRUE(has(skipped.err, "plugin returned a session that was skipped: it is not a JSON object"))
      << skipped.err;

  const auto crashed = f.parallex(
      {"transcripts", "--harness", "misbehaving", "--json", "/t/a", "/t/b", "/t/crash", "/t/c"}, dirs, env);
  EXPECT_NE(crashed.status, 0) << crashed.out;
  EXPECT_EQ(ids(crashed.out), (std::vector<std::string>{"/t/a", "/t/b"}));
  EXPECT_TRUE(has(crashed.err, "plugin misbehaving crashed in parse_transcripts")) << crashed.err;

  const auto first = f.parallex({"transcripts", "--harness", "misbehaving", "--json", "/t/crash"}, dirs, env);
  EXPECT_NE(first.status, 0);
  EXPECT_EQ(first.out, "") << "nothing to print, not even an empty array";
  const auto text = f.parallex({"transcripts", "--harness", "misbehaving", "/t/a", "/t/crash"}, dirs, env);
  EXPECT_NE(text.status, 0);
  EXPECT_TRUE(has(text.out, "session /t/a")) << text.out;
}
