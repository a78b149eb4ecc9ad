// Where things live: run records under XDG_STATE_HOME, agents under
// XDG_DATA_HOME, user profiles under XDG_CONFIG_HOME, and the records an
// older Parallex left under the data folder still reported.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "test_paths.hpp"

namespace px::cli_test {
namespace {

// Without PARALLEX_HOME: the XDG folders of a home of its own.
struct XdgHome {
  Folder home;
  std::map<std::string, std::string> env() const {
    return {{"HOME", home.path.string()},
            {"XDG_DATA_HOME", (home.path / "data").string()},
            {"XDG_STATE_HOME", (home.path / "state").string()},
            {"XDG_CONFIG_HOME", (home.path / "config").string()},
            {"XDG_RUNTIME_DIR", (home.path / "runtime").string()}};
  }
  Ran px(const std::string& args) const {
    fs::create_directories(home.path / "runtime");
    fs::permissions(home.path / "runtime", fs::perms::owner_all);
    // Runs work in a folder of the home, never the home itself (the default profile refuses that).
    fs::create_directories(home.path / "work");
    return sh(
        "unset PARALLEX_HOME; cd " + q((home.path / "work").string()) + " && " + PARALLEX_EXE + " " + args,
        env());
  }
};

void old_record(const fs::path& runs, const std::string& id) {
  write(runs / id / "run.json", nlohmann::json{{"run_id", id},
                                               {"started_at", "2020-01-02T03:04:05.000Z"},
                                               {"ended_at", "2020-01-02T03:04:06.000Z"},
                                               {"command", {"/bin/true"}},
                                               {"exit_status", 0}}
                                    .dump());
}

TEST(Locations, RunRecordsGoToTheStateFolderAndOldOnesAreStillRead) {
  XdgHome x;
  const Ran ran = x.px("run --offline -- /bin/true");
  if (ran.status != 0) GTEST_SKIP() << "no sealed run here: " << ran.err;
  EXPECT_TRUE(fs::is_directory(x.home.path / "state/parallex/runs")) << ran.err;
  EXPECT_FALSE(fs::exists(x.home.path / "data/parallex/runs"));
  old_record(x.home.path / "data/parallex/runs", "20200102-030405-0ld0");
  const Ran rep = x.px("report --since 2019-01-01 --json");
  ASSERT_EQ(rep.status, 0) << rep.err;
  const auto j = nlohmann::json::parse(rep.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << rep.out;
  ASSERT_EQ(j["runs"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["runs"][0]["id"], "20200102-030405-0ld0");  // oldest first
}

TEST(Locations, AgentsAreDataTheirRunRecordsState) {
  XdgHome x;
  const Ran made = x.px("agent new keeper --email keeper@example.com --json");
  ASSERT_EQ(made.status, 0) << made.err;
  const auto agent = nlohmann::json::parse(made.out, nullptr, false);
  ASSERT_FALSE(agent.is_discarded()) << made.out;
  EXPECT_EQ(agent["name"], "keeper");
  EXPECT_EQ(agent["store"], (x.home.path / "data/parallex/agents/keeper").string());
  EXPECT_TRUE(fs::is_directory(x.home.path / "state/parallex/agents/keeper/runs"));
  EXPECT_FALSE(fs::exists(x.home.path / "data/parallex/agents/keeper/runs"));
  // A record an older Parallex kept in the agent's folder is reported.
  old_record(x.home.path / "data/parallex/agents/keeper/runs", "20200102-030405-0ld1");
  const Ran rep = x.px("agent report keeper --since 2019-01-01 --json");
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_NE(rep.out.find("20200102-030405-0ld1"), std::string::npos) << rep.out;
  // Deleting the agent takes its records too.
  ASSERT_EQ(x.px("agent delete keeper --yes").status, 0);
  EXPECT_FALSE(fs::exists(x.home.path / "state/parallex/agents/keeper"));
}

// An executable copied where its plugins are not runs every harness with the
// profile's rules alone: it says so, once per run, and `check` says so too.
TEST(Locations, AnExecutableThatFindsNoPluginsSaysSo) {
  XdgHome x;
  const fs::path copy = x.home.path / "bin/parallex";
  fs::create_directories(copy.parent_path());
  fs::copy_file(PARALLEX_EXE, copy);
  const std::string bare = "unset PARALLEX_PLUGIN_PATH; cd " + q((x.home.path / "work").string()) + " && ";
  fs::create_directories(x.home.path / "work");
  fs::create_directories(x.home.path / "runtime");
  fs::permissions(x.home.path / "runtime", fs::perms::owner_all);
  const Ran ran = sh(bare + q(copy.string()) + " run --offline -- /bin/true", x.env());
  const std::string said = "no harness plugin was found";
  const auto first = ran.err.find(said);
  ASSERT_NE(first, std::string::npos) << ran.err;
  EXPECT_EQ(ran.err.find(said, first + 1), std::string::npos) << "said once: " << ran.err;
  EXPECT_NE(ran.err.find("PARALLEX_PLUGIN_PATH"), std::string::npos) << ran.err;
  const Ran check = sh(bare + q(copy.string()) + " check", x.env());
  EXPECT_NE(check.out.find("Harness plugins: NONE: " + said), std::string::npos) << check.out;
  const Ran json = sh(bare + q(copy.string()) + " check --json", x.env());
  const auto j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.out;
  EXPECT_TRUE(j["plugins"]["found"].empty());
  EXPECT_NE(j["plugins"]["problem"].get<std::string>().find(said), std::string::npos);
  // `detect` and `plugins` say it too: "no plugin claims this command" alone reads as if one could.
  const Ran detect = sh(bare + q(copy.string()) + " detect -- claude", x.env());
  EXPECT_NE(detect.err.find(said), std::string::npos) << detect.out << detect.err;
  const Ran listed = sh(bare + q(copy.string()) + " plugins", x.env());
  EXPECT_NE(listed.out.find(said), std::string::npos) << listed.out << listed.err;
  // The fix it gives works as said: the plugin files put in the folder it names
  // (where an installed parallex finds them, from its own folder) are found, and
  // the run is quiet about it.
  const std::string put = "put the plugin files (the *.so of a build's plugins/ folder) in ";
  const auto from = ran.err.find(put, first);
  ASSERT_NE(from, std::string::npos) << ran.err;
  const auto start = from + put.size();
  const fs::path folder = ran.err.substr(start, ran.err.find(", where", start) - start);
  EXPECT_EQ(folder, x.home.path / "lib/parallex/plugins") << ran.err;
  fs::create_directories(folder);
  for (const auto& e : fs::directory_iterator(PARALLEX_PLUGIN_BUILD_DIR))
    if (e.path().extension() == ".so") fs::copy_file(e.path(), folder / e.path().filename());
  const Ran fixed = sh(bare + q(copy.string()) + " run --offline -- /bin/true", x.env());
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_EQ(fixed.err.find(said), std::string::npos) << "the fix it gave did not work: " << fixed.err;
  EXPECT_NE(sh(bare + q(copy.string()) + " check", x.env()).out.find("Harness plugins: claude-code"),
            std::string::npos);
  // The build's own executable finds the build's plugins, and says nothing of the kind.
  const Ran built = sh(bare + std::string(PARALLEX_EXE) + " check", x.env());
  EXPECT_NE(built.out.find("Harness plugins: claude-code"), std::string::npos) << built.out;
  const Ran run = sh(bare + std::string(PARALLEX_EXE) + " run --offline -- /bin/true", x.env());
  EXPECT_EQ(run.err.find(said), std::string::npos) << run.err;
}

// A harness's state folder that did not exist before the run (a fresh home) is
// the run's own, kept afterwards: what the run made there is said by what it is,
// and a run that made only folders kept no file ("0 files" said nothing).
TEST(Locations, AFreshStateFolderIsKeptAndSaidAsItIs) {
  XdgHome x;
  const Ran folders = x.px("run --harness codex -- sh -c 'mkdir -p \"$HOME/.codex/sessions/2026\"'");
  if (folders.status != 0) GTEST_SKIP() << "no sealed run here: " << folders.err;
  const std::string codex = (x.home.path / ".codex").string();
  EXPECT_TRUE(fs::is_directory(x.home.path / ".codex/sessions/2026")) << folders.err;
  EXPECT_NE(folders.err.find("kept the folders the run made in " + codex +
                             " (it did not exist before the run), and no file"),
            std::string::npos)
      << folders.err;
  EXPECT_EQ(folders.err.find("0 files"), std::string::npos) << folders.err;
  fs::remove_all(x.home.path / ".codex");
  const Ran file =
      x.px("run --harness codex -- sh -c 'mkdir -p \"$HOME/.codex/s\" && echo x > \"$HOME/.codex/s/f\"'");
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_NE(
      file.err.find("kept what the run wrote in " + codex + " (it did not exist before the run): 1 file"),
      std::string::npos)
      << file.err;
}

TEST(Locations, ProfileByNameFromTheConfigFolder) {
  XdgHome x;
  write(x.home.path / "config/parallex/profiles/mine.yaml",
        "version: 1\nnetwork:\n  mode: allowlist\n  allow:\n    - mine.example.org\n");
  const Ran shown = x.px("policy show --profile mine -- /bin/true");
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("mine.example.org"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("config/parallex/profiles/mine.yaml"), std::string::npos) << shown.out;
  const Ran missing = x.px("policy show --profile nope -- /bin/true");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("config/parallex/profiles/nope.yaml"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace px::cli_test
