// The plugin host against real shared libraries: the four shipped plugins and
// a set of misbehaving ones. Every failure must name the file and the reason,
// and never take the host (or the other plugins) down.
#include <gtest/gtest.h>
#include <parallex/plugin_abi.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "pluginhost/detection.hpp"
#include "pluginhost/plugin_check.hpp"
#include "bad_plugins.hpp"
#include "pluginhost/plugin_set.hpp"
#include "policy/compose.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace px;
using namespace px::pluginhost;
using px::test::bad;

namespace {

std::string only_failure(const PluginSet& set) {
  EXPECT_EQ(set.failures().size(), 1u);
  return set.failures().empty() ? "" : set.failures().front().reason;
}

}  // namespace

TEST(PluginHost, RefusesAnotherAbiMajorNamingFileAndVersions) {
  auto set = PluginSet::load({bad("wrong_major")});
  EXPECT_TRUE(set.plugins().empty());
  const auto reason = only_failure(set);
  EXPECT_NE(reason.find("wrong_major.so"), std::string::npos) << reason;
  const std::string ours =
      "ABI " + std::to_string(PX_PLUGIN_ABI_MAJOR) + "." + std::to_string(PX_PLUGIN_ABI_MINOR);
  EXPECT_NE(reason.find("ABI 2.0"), std::string::npos) << reason;
  EXPECT_NE(reason.find(ours), std::string::npos) << reason;
}

TEST(PluginHost, RefusesANewerMinor) {
  auto set = PluginSet::load({bad("newer_minor")});
  const auto reason = only_failure(set);
  EXPECT_NE(reason.find("newer than this parallex"), std::string::npos) << reason;
}

// ABI 1.3 added project_files at the end of the descriptor: a plugin built
// for 1.1 still loads, and simply declares none.
TEST(PluginHost, AnOlderMinorStillLoadsAndDeclaresNoProjectFile) {
  auto set = PluginSet::load({bad("old_minor")});
  ASSERT_EQ(set.plugins().size(), 1u) << (set.failures().empty() ? "" : set.failures().front().reason);
  EXPECT_EQ(set.plugins().front()->abi_minor(), 1);
  auto files = set.plugins().front()->project_files();
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_TRUE(files.value().files.empty());
}

TEST(PluginHost, AProjectFileOutsideTheProjectIsThePluginsError) {
  auto set = PluginSet::load({bad("climbing_project_file")});
  ASSERT_EQ(set.plugins().size(), 1u);
  auto files = set.plugins().front()->project_files();
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message.find("plugin climbing"), std::string::npos) << files.error().message;
  EXPECT_NE(files.error().message.find("\"../outside/.bashrc\", which climbs"), std::string::npos)
      << files.error().message;
}

// The shipped plugins declare what their harness runs or trusts in a project.
TEST(PluginHost, ShippedPluginsDeclareTheirProjectFiles) {
  const fs::path dir = PARALLEX_PLUGIN_BUILD_DIR;
  if (!fs::exists(dir / "claude-code.so")) GTEST_SKIP() << "the shipped plugins are not built in " << dir;
  auto set = PluginSet::load({dir});
  const std::map<std::string, std::vector<std::string>> want = {
      {"claude-code",
       {".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".claude/hooks",
        ".claude/commands", ".claude/agents", ".claude/skills"}},
      {"codex", {".codex", ".agents"}},
      {"opencode", {"opencode.json", "opencode.jsonc", ".opencode"}},
      {"generic", {}}};
  for (const auto& [name, paths] : want) {
    const auto* plugin = set.find(name);
    ASSERT_NE(plugin, nullptr) << name;
    auto files = plugin->project_files();
    ASSERT_TRUE(files) << files.error().message;
    std::set<std::string> got;
    for (const auto& f : files.value().files) {
      got.insert(f.path);
      EXPECT_FALSE(f.reason.empty()) << name << " " << f.path;
    }
    for (const auto& p : paths) EXPECT_TRUE(got.count(p)) << name << " does not declare " << p;
    if (paths.empty()) {
      EXPECT_TRUE(got.empty()) << name;
    }
  }
}

TEST(PluginHost, RefusesALibraryThatIsNotAPlugin) {
  auto set = PluginSet::load({bad("no_entry")});
  const auto reason = only_failure(set);
  EXPECT_NE(reason.find("not a Parallex plugin"), std::string::npos) << reason;
}

TEST(PluginHost, RefusesAFileThatIsNotALibrary) {
  const fs::path dir = fs::temp_directory_path() / ("px-notelf-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "junk.so") << "this is not an ELF file\n"; }
  auto set = PluginSet::load({dir});
  const auto reason = only_failure(set);
  EXPECT_NE(reason.find("junk.so"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cannot be loaded"), std::string::npos) << reason;
  fs::remove_all(dir);
}

TEST(PluginHost, RefusesAFailingEntryPoint) {
  auto set = PluginSet::load({bad("null_entry")});
  const auto reason = only_failure(set);
  EXPECT_NE(reason.find("entry point failed"), std::string::npos) << reason;
}

TEST(PluginHost, ThrowingCallbacksBecomeErrorsNamingThePlugin) {
  auto set = PluginSet::load({bad("throwing")});
  ASSERT_EQ(set.plugins().size(), 1u);
  const auto& plugin = *set.plugins().front();
  auto detected = plugin.detect({{"x"}, "", ""});
  ASSERT_FALSE(detected);
  EXPECT_NE(detected.error().message.find("plugin throwing"), std::string::npos);
  EXPECT_NE(detected.error().message.find("detect exploded"), std::string::npos);
  auto contributed = plugin.contribute(policy::Platform::linux_host, "/h", "/h", "/r", nullptr);
  ASSERT_FALSE(contributed);
  EXPECT_NE(contributed.error().message.find("contribute exploded"), std::string::npos);
  // Detection across the set skips the broken plugin and reports it.
  std::vector<std::string> problems;
  EXPECT_TRUE(set.claims({{"x"}, "", ""}, &problems).empty());
  EXPECT_EQ(problems.size(), 1u);
}

TEST(PluginHost, CheckInChildReportsACrashByNameAndStage) {
  auto outcome = check_in_child(bad("crash_entry") / "crash_entry.so");
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.detail.find("SIGSEGV"), std::string::npos) << outcome.detail;
  EXPECT_NE(outcome.detail.find("entry point"), std::string::npos) << outcome.detail;
  auto fine = check_in_child(bad("greedy") / "greedy.so");
  EXPECT_TRUE(fine.ok) << fine.detail;
}

TEST(PluginHost, DuplicateNamesAreRefusedAndTheFirstKept) {
  const fs::path dir = fs::temp_directory_path() / ("px-dup-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(bad("greedy") / "greedy.so", dir / "greedy-copy.so", fs::copy_options::overwrite_existing);
  auto set = PluginSet::load({bad("greedy"), dir});
  ASSERT_EQ(set.plugins().size(), 1u);
  const auto reason = only_failure(set);
  EXPECT_NE(reason.find("already loaded"), std::string::npos) << reason;
  fs::remove_all(dir);
}

TEST(PluginHost, UnknownHarnessListsTheKnownOnes) {
  auto set = PluginSet::load({bad("greedy"), bad("throwing")});
  auto r = set.require("nope");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("unknown harness 'nope'"), std::string::npos);
  EXPECT_NE(r.error().message.find("greedy"), std::string::npos);
  EXPECT_NE(r.error().message.find("throwing"), std::string::npos);
}

// A plugin may add carve-ins for its harness's own state only.
class GreedyPolicy : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(GreedyPolicy, IsRefusedWithAClearError) {
  const auto [mode, expected] = GetParam();
  ::setenv("GREEDY_MODE", mode, 1);
  auto set = PluginSet::load({bad("greedy")});
  ASSERT_EQ(set.plugins().size(), 1u);
  const fs::path home = fs::temp_directory_path() / "px-greedy-home";
  auto contribution =
      set.plugins().front()->contribute(policy::Platform::linux_host, home, home, "/srv/run", nullptr);
  ::unsetenv("GREEDY_MODE");
  if (!contribution && *expected) {
    // Refused before it reached the host (the SDK will not cut a string at a NUL).
    EXPECT_NE(contribution.error().message.find("plugin greedy"), std::string::npos)
        << contribution.error().message;
    EXPECT_NE(contribution.error().message.find(expected), std::string::npos) << contribution.error().message;
    return;
  }
  ASSERT_TRUE(contribution) << contribution.error().message;
  policy::ComposeInputs in;
  in.user_home = home;
  in.run_folder = "/srv/run";
  in.temp_dir = "/tmp/px-run-tmp";
  auto base = policy::load_profile("default");
  ASSERT_TRUE(base);
  in.profiles.push_back(base.value());
  in.harness = contribution.value();
  auto composed = policy::compose(in);
  if (std::string(expected).empty()) {
    EXPECT_TRUE(composed) << composed.error().message;
    return;
  }
  ASSERT_FALSE(composed);
  EXPECT_NE(composed.error().message.find("greedy"), std::string::npos) << composed.error().message;
  EXPECT_NE(composed.error().message.find(expected), std::string::npos) << composed.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, GreedyPolicy,
    ::testing::Values(
        std::pair{"home", "holds all of"}, std::pair{"home-read", "holds all of"},
        std::pair{"secret", "cannot un-deny"}, std::pair{"usr", "outside the run's home"},
        std::pair{"env", "keeps every variable"}, std::pair{"relative", "neither absolute"},
        std::pair{"tmp", "shared temp dir /tmp"}, std::pair{"tmp-read", "shared temp dir /tmp"},
        std::pair{"home-climb", "climbs with '..'"}, std::pair{"state-climb", "climbs with '..'"},
        std::pair{"nul", "holds a NUL byte"}, std::pair{"newline", "holds a control character"},
        std::pair{"reason-escape", "holds a control character"},
        std::pair{"config-climb", "climbs with '..'"},
        std::pair{"read-only-outside", "is not in the run's home"},
        std::pair{"set-HOME", "only Parallex sets it"}, std::pair{"set-TMPDIR", "only Parallex sets it"},
        std::pair{"set-HTTPS_PROXY", "only Parallex sets it"},
        std::pair{"set-NO_PROXY", "only Parallex sets it"},
        std::pair{"set-PARALLEX_RUN", "only Parallex sets it"}, std::pair{"set-LD_PRELOAD", "loads code"},
        std::pair{"set-BASH_ENV", "runs a file when a shell"},
        std::pair{"keep-suffix", "a secret of any program"}, std::pair{"keep-loader", "loads code"},
        std::pair{"fine", ""}),
    [](const auto& p) {
      std::string name = p.param.first;
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

TEST(PluginHost, ShippedPluginsLoadFromTheBuildTree) {
  const fs::path dir = PARALLEX_PLUGIN_BUILD_DIR;
  if (!fs::exists(dir / "generic.so")) GTEST_SKIP() << "the shipped plugins are not built in " << dir;
  auto set = PluginSet::load({dir});
  EXPECT_TRUE(set.failures().empty());
  for (const char* name : {"claude-code", "codex", "opencode", "generic"})
    EXPECT_NE(set.find(name), nullptr) << name << " is missing from " << dir;
  auto choice = choose_harness(set, std::nullopt, nullptr);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice.value().plugin, nullptr);
  CommandLine claude{{"claude", "-p", "hi"}, "", ""};
  auto detected = choose_harness(set, std::nullopt, &claude);
  ASSERT_TRUE(detected);
  ASSERT_NE(detected.value().plugin, nullptr);
  EXPECT_EQ(detected.value().plugin->name(), "claude-code");
}
