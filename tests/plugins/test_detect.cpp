// Detection through the real plugins: which plugin wins a command line, and
// that no harness plugin claims what is not its harness.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "loaded_plugin.hpp"

namespace fs = std::filesystem;
using namespace px_test;

namespace {

struct Case {
  std::string label;
  CommandLine command;
  std::string winner;  // "" when no plugin but generic may claim
};

struct Outcome {
  std::string winner;
  int confidence = 0;
  std::string reason;
  std::vector<std::string> harness_claims;  // non-generic plugins that claimed
};

Outcome run_all(const CommandLine& command) {
  Outcome out;
  for (const auto& name : bundled_plugins()) {
    const px_plugin* p = load_plugin(name);
    if (!p) continue;
    DetectResult r = detect(*p, command);
    EXPECT_EQ(r.rc, PX_OK) << name;
    EXPECT_TRUE(r.errors.empty()) << name;
    EXPECT_LE(r.claims.size(), 1u) << name << " claimed more than once";
    for (const auto& c : r.claims) {
      EXPECT_GE(c.confidence, 1);
      EXPECT_LE(c.confidence, 100);
      EXPECT_FALSE(c.reason.empty()) << name << " claimed without a reason";
      if (name != "generic") out.harness_claims.push_back(name);
      if (c.confidence > out.confidence) out = {name, c.confidence, c.reason, out.harness_claims};
    }
  }
  return out;
}

std::vector<Case> cases() {
  const std::string claude_pkg = "/usr/lib/node_modules/@anthropic-ai/claude-code";
  return {
      {"bare_claude", {{"claude", "-p", "hi"}, "", ""}, "claude-code"},
      {"bare_codex", {{"codex", "exec", "hi"}, "", ""}, "codex"},
      {"bare_opencode", {{"opencode", "run", "hi"}, "", ""}, "opencode"},
      {"absolute_claude", {{"/usr/local/bin/claude"}, "/usr/local/bin/claude", ""}, "claude-code"},
      {"absolute_codex", {{"/opt/tools/bin/codex", "--version"}, "/opt/tools/bin/codex", ""}, "codex"},
      {"absolute_opencode",
       {{"/home/user/.opencode/bin/opencode"}, "/home/user/.opencode/bin/opencode", ""},
       "opencode"},
      {"symlink_into_claude_package", {{"cc"}, "/usr/local/bin/cc", claude_pkg + "/cli.js"}, "claude-code"},
      {"symlink_into_codex_package",
       {{"cx"}, "/usr/local/bin/cx", "/usr/lib/node_modules/@openai/codex/bin/codex.js"},
       "codex"},
      {"symlink_into_opencode_package",
       {{"oc"}, "/usr/local/bin/oc", "/usr/lib/node_modules/opencode-ai/bin/opencode.exe"},
       "opencode"},
      {"claude_native_install",
       {{"c2"}, "/home/user/.local/bin/c2", "/home/user/.local/share/claude/versions/2.1.197"},
       "claude-code"},
      {"node_claude_cli",
       {{"node", claude_pkg + "/cli.js", "-p", "hi"}, "/usr/bin/node", "/usr/bin/node"},
       "claude-code"},
      {"node_with_flags_claude_cli",
       {{"/usr/bin/node", "--max-old-space-size=4096", claude_pkg + "/cli.js"}, "/usr/bin/node", ""},
       "claude-code"},
      {"npx_codex", {{"npx", "@openai/codex", "exec", "fix the tests"}, "/usr/bin/npx", ""}, "codex"},
      {"npx_y_codex_latest", {{"npx", "-y", "@openai/codex@latest"}, "/usr/bin/npx", ""}, "codex"},
      {"bunx_opencode", {{"bunx", "opencode-ai"}, "", ""}, "opencode"},
      {"bunx_opencode_version", {{"bunx", "opencode-ai@1.18.33", "run", "hi"}, "", ""}, "opencode"},
      {"npm_exec_claude", {{"npm", "exec", "@anthropic-ai/claude-code"}, "", ""}, "claude-code"},
      {"env_claude", {{"env", "FOO=1", "claude"}, "/usr/bin/env", "/usr/bin/env"}, "claude-code"},
      {"env_i_codex", {{"/usr/bin/env", "-i", "A=1", "B=2", "codex"}, "/usr/bin/env", ""}, "codex"},
      // Negatives: only the generic fallback claims these.
      {"claudette", {{"claudette"}, "", ""}, "generic"},
      {"claude_prefix_path", {{"/usr/bin/claude-helper"}, "/usr/bin/claude-helper", ""}, "generic"},
      {"node_other_script", {{"node", "other.js"}, "/usr/bin/node", ""}, "generic"},
      {"node_other_package",
       {{"node", "/usr/lib/node_modules/@anthropic-ai/other/cli.js"}, "", ""},
       "generic"},
      {"npx_other_package", {{"npx", "@openai/codexify"}, "", ""}, "generic"},
      {"cat", {{"cat", "README.md"}, "/usr/bin/cat", "/usr/bin/cat"}, "generic"},
      {"env_only", {{"env", "FOO=1"}, "", ""}, "generic"},
  };
}

class Detect : public ::testing::TestWithParam<Case> {};

TEST_P(Detect, PicksTheRightPlugin) {
  const Case& c = GetParam();
  Outcome out = run_all(c.command);
  EXPECT_EQ(out.winner, c.winner) << "reason: " << out.reason;
  if (c.winner == "generic") {
    EXPECT_TRUE(out.harness_claims.empty()) << "a harness plugin claimed: " << out.harness_claims.front();
    EXPECT_EQ(out.confidence, 1);
  } else {
    EXPECT_EQ(out.harness_claims.size(), 1u) << "exactly one harness plugin should claim";
    EXPECT_GE(out.confidence, 80);
  }
}

INSTANTIATE_TEST_SUITE_P(CommandLines, Detect, ::testing::ValuesIn(cases()),
                         [](const auto& test) { return test.param.label; });

TEST(Detect, ReasonNamesThePackageForASymlink) {
  const px_plugin* p = load_plugin("claude-code");
  ASSERT_NE(p, nullptr);
  auto r =
      detect(*p, {{"cc"}, "/usr/local/bin/cc", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"});
  ASSERT_EQ(r.claims.size(), 1u);
  EXPECT_NE(r.claims[0].reason.find("@anthropic-ai/claude-code"), std::string::npos) << r.claims[0].reason;
  EXPECT_GT(r.claims[0].confidence, 90);
}

TEST(Detect, RealSymlinkResolvedIntoThePackage) {
  // A real file tree: bin/claude -> ../lib/node_modules/@anthropic-ai/claude-code/cli.js.
  const fs::path root = fs::temp_directory_path() / ("px-detect-" + std::to_string(::getpid()));
  const fs::path pkg = root / "lib/node_modules/@anthropic-ai/claude-code";
  fs::create_directories(pkg);
  fs::create_directories(root / "bin");
  std::ofstream(pkg / "cli.js") << "#!/usr/bin/env node\n";
  fs::create_symlink("../lib/node_modules/@anthropic-ai/claude-code/cli.js", root / "bin/my-assistant");
  const std::string real = fs::canonical(root / "bin/my-assistant").string();
  Outcome out = run_all({{"my-assistant"}, (root / "bin/my-assistant").string(), real});
  EXPECT_EQ(out.winner, "claude-code") << out.reason;
  fs::remove_all(root);
}

TEST(Detect, InstalledClientsAreRecognised) {
  // The real npm installs, when this machine has them (npm i -g ...).
  int found = 0;
  for (auto [program, plugin] :
       {std::pair{"claude", "claude-code"}, {"codex", "codex"}, {"opencode", "opencode"}}) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin"}) {
      const fs::path link = fs::path(dir) / program;
      std::error_code ec;
      if (!fs::exists(link, ec)) continue;
      ++found;
      const std::string real = fs::canonical(link).string();
      Outcome out = run_all({{program}, link.string(), real});
      EXPECT_EQ(out.winner, plugin) << link << " -> " << real;
      // Reached through an alias, only the resolved path is left to go by.
      Outcome alias = run_all({{"alias"}, "/usr/local/bin/alias", real});
      EXPECT_EQ(alias.winner, plugin) << real;
      break;
    }
  }
  if (found == 0) GTEST_SKIP() << "none of claude, codex, opencode is installed";
}

TEST(Detect, EmptyCommandIsClaimedByNobody) {
  for (const auto& name : bundled_plugins()) {
    const px_plugin* p = load_plugin(name);
    ASSERT_NE(p, nullptr);
    auto r = detect(*p, {{}, "", ""});
    EXPECT_EQ(r.rc, PX_OK) << name;
    EXPECT_TRUE(r.claims.empty()) << name;
  }
}

TEST(Detect, GenericClaimsAnythingAtConfidenceOne) {
  const px_plugin* p = load_plugin("generic");
  ASSERT_NE(p, nullptr);
  for (const CommandLine& c : {CommandLine{{"make", "test"}, "", ""}, CommandLine{{"claude"}, "", ""},
                               CommandLine{{"/bin/sh", "-c", "echo hi"}, "", ""}}) {
    auto r = detect(*p, c);
    ASSERT_EQ(r.claims.size(), 1u);
    EXPECT_EQ(r.claims[0].confidence, 1);
    EXPECT_NE(r.claims[0].reason.find(fs::path(c.argv[0]).filename().string()), std::string::npos);
  }
}

}  // namespace
