// What each plugin contributes, per platform, through the C ABI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "loaded_plugin.hpp"

namespace fs = std::filesystem;
using namespace px_test;

namespace {

const std::string kUserHome = "/home/user";
const std::string kAgentHome = "/home/user/.local/share/parallex/agents/reviewer/home";

ContributeArgs agent_run(px_platform platform, std::optional<CommandLine> command = std::nullopt) {
  ContributeArgs a;
  a.platform = platform;
  a.user_home = kUserHome;
  a.run_home = kAgentHome;
  a.command = std::move(command);
  return a;
}

ContributeArgs own_run(px_platform platform, std::optional<CommandLine> command = std::nullopt) {
  ContributeArgs a = agent_run(platform, std::move(command));
  a.run_home = kUserHome;
  return a;
}

ContributeResult run(const std::string& plugin, const ContributeArgs& args) {
  const px_plugin* p = load_plugin(plugin);
  if (!p) return {};
  ContributeResult r = contribute(*p, args);
  EXPECT_EQ(r.rc, PX_OK) << plugin;
  EXPECT_TRUE(r.errors.empty()) << plugin << ": " << (r.errors.empty() ? "" : r.errors.front());
  return r;
}

std::string uid() {
  return std::to_string(::getuid());
}

bool has_rw(const ContributeResult& r, const std::string& path) {
  auto* e = r.path(path);
  return e && (e->access == PX_ACCESS_READ_WRITE || e->access == PX_ACCESS_STATE_DIR);
}
bool has_read(const ContributeResult& r, const std::string& path) {
  auto* e = r.path(path);
  return e && e->access == PX_ACCESS_READ;
}

struct PluginPlatform {
  std::string plugin;
  px_platform platform;
};

std::vector<PluginPlatform> all_combinations() {
  std::vector<PluginPlatform> out;
  for (const auto& name : bundled_plugins())
    for (px_platform pf : {PX_PLATFORM_LINUX, PX_PLATFORM_MACOS}) out.push_back({name, pf});
  return out;
}

// ---- rules every plugin keeps, on both platforms ---------------------------------

class EveryPlugin : public ::testing::TestWithParam<PluginPlatform> {};

TEST_P(EveryPlugin, NeverAsksForTooMuch) {
  const auto& [plugin, platform] = GetParam();
  for (const ContributeArgs& args :
       {agent_run(platform), own_run(platform), agent_run(platform, CommandLine{{"node", "x.js"}, "", ""})}) {
    ContributeResult r = run(plugin, args);
    for (const auto& e : r.paths) {
      SCOPED_TRACE(e.path);
      EXPECT_TRUE(e.path.rfind("~/", 0) == 0 || e.path.rfind('/', 0) == 0) << "neither ~/ nor absolute";
      EXPECT_FALSE(e.reason.empty());
      for (const char* broad : {"~", "~/", "/", "~/.claude", "~/.cache", "~/.npm", "~/.config", "~/.local",
                                "~/.local/share", "~/.local/state", "/tmp", "/private/tmp", "~/Library"})
        EXPECT_NE(e.path, broad) << "too broad a carve-out";
      for (const char* secret : {"/.ssh", "/.aws", "/.gnupg", "/.kube", "/.netrc", "/.docker", "/gcloud"})
        EXPECT_EQ(e.path.find(secret), std::string::npos) << "a secret path";
    }
    for (const auto& e : r.env) {
      EXPECT_FALSE(e.reason.empty()) << e.name;
      EXPECT_NE(e.name, "*");
    }
    for (const char* never :
         {"GOOGLE_APPLICATION_CREDENTIALS", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "GH_TOKEN",
          "SSH_AUTH_SOCK", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"})
      EXPECT_FALSE(r.keeps(never)) << never << " must not pass from the host";
    for (const auto& c : r.config_dirs) {
      EXPECT_EQ(c.path.rfind("~/", 0), 0u) << c.variable << " must point under the run's home";
      EXPECT_FALSE(c.reason.empty());
    }
    for (const auto& n : r.nested) EXPECT_FALSE(n.reason.empty());
    for (const auto& h : r.hosts) {
      EXPECT_EQ(h.value.find('/'), std::string::npos) << h.value << " is not a plain host";
      EXPECT_EQ(h.value.find(':'), std::string::npos) << h.value << " is not a plain host";
      EXPECT_FALSE(h.reason.empty());
    }
    for (const auto& d : r.executable_dirs) EXPECT_FALSE(d.reason.empty());
  }
}

TEST_P(EveryPlugin, ConfigDirsOnlyForAgentRuns) {
  const auto& [plugin, platform] = GetParam();
  EXPECT_TRUE(run(plugin, own_run(platform)).config_dirs.empty())
      << "in a run under your own home the harness's default dirs are already the right ones";
}

TEST_P(EveryPlugin, WorksWithoutACommand) {
  const auto& [plugin, platform] = GetParam();
  ContributeArgs args = agent_run(platform);
  args.command.reset();
  run(plugin, args);  // rc and errors checked inside
}

INSTANTIATE_TEST_SUITE_P(Bundled, EveryPlugin, ::testing::ValuesIn(all_combinations()), [](const auto& test) {
  std::string n = test.param.plugin + (test.param.platform == PX_PLATFORM_LINUX ? "_linux" : "_macos");
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
});

// ---- claude-code ---------------------------------------------------------------

class ClaudeCode : public ::testing::TestWithParam<px_platform> {};

TEST_P(ClaudeCode, StateCarveOuts) {
  ContributeResult r = run("claude-code", agent_run(GetParam(), CommandLine{{"claude"}, "", ""}));
  for (const char* p : {"~/.claude.json", "~/.claude/projects", "~/.claude/session-env", "~/.claude/sessions",
                        "~/.claude/todos", "~/.claude/shell-snapshots", "~/.claude/statsig",
                        "~/.claude/telemetry", "~/.claude/backups", "~/.claude/debug"})
    EXPECT_TRUE(has_rw(r, p)) << p;
  // Writable through a copy of the run's own (home_files: its changes are held back).
  EXPECT_TRUE(has_rw(r, "~/.claude/settings.json"));
  for (const char* p : {"~/.claude/CLAUDE.md", "~/.claude/ide", "~/.config/anthropic"})
    EXPECT_TRUE(has_read(r, p)) << p << " should be read only";
  EXPECT_EQ(r.path("~/.claude"), nullptr) << "never the whole ~/.claude";
  // The scratch dir needs a carve-in on macOS only: the seal's /tmp is private on Linux.
  const std::string scratch =
      (GetParam() == PX_PLATFORM_MACOS ? "/private/tmp/claude-" : "/tmp/claude-") + uid();
  EXPECT_EQ(has_rw(r, scratch), GetParam() == PX_PLATFORM_MACOS) << scratch;
}

TEST_P(ClaudeCode, EnvironmentAndConfigDir) {
  ContributeResult r = run("claude-code", agent_run(GetParam(), CommandLine{{"claude"}, "", ""}));
  EXPECT_TRUE(r.keeps("ANTHROPIC_API_KEY"));
  EXPECT_TRUE(r.keeps("ANTHROPIC_BASE_URL"));
  EXPECT_TRUE(r.keeps("CLAUDE_CODE_USE_BEDROCK"));
  EXPECT_FALSE(r.keeps("CLAUDE_CODE_TMPDIR"));
  EXPECT_FALSE(r.keeps("OPENAI_API_KEY")) << "another harness's key";
  ASSERT_NE(r.config_dir("CLAUDE_CONFIG_DIR"), nullptr);
  EXPECT_EQ(r.config_dir("CLAUDE_CONFIG_DIR")->path, "~/.claude");
  ASSERT_EQ(r.hosts.size(), 2u);
  EXPECT_EQ(r.hosts[0].value, "api.anthropic.com");
}

TEST_P(ClaudeCode, NestedSandboxOffWhenArgv0IsClaude) {
  for (const CommandLine& c :
       {CommandLine{{"claude", "-p", "hi"}, "", ""},
        CommandLine{
            {"cc"}, "/usr/bin/cc", "/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"}}) {
    ContributeResult r = run("claude-code", agent_run(GetParam(), c));
    ASSERT_EQ(r.nested.size(), 2u) << c.argv[0];
    EXPECT_EQ(r.nested[0].kind, PX_NESTED_ARG);
    EXPECT_EQ(r.nested[0].value, R"(--settings={"sandbox":{"enabled":false}})");
    EXPECT_NE(r.nested[0].reason.find("sandbox"), std::string::npos);
    // As root Claude Code accepts --dangerously-skip-permissions only when told it is sandboxed.
    EXPECT_EQ(r.nested[1].kind, PX_NESTED_ENV);
    EXPECT_EQ(r.nested[1].name, "IS_SANDBOX");
    EXPECT_EQ(r.nested[1].value, "1");
  }
  // Shown by harness name (no command): the switches are listed as they would apply.
  EXPECT_EQ(run("claude-code", agent_run(GetParam())).nested.size(), 2u);
}

TEST_P(ClaudeCode, NoArgumentInsertedIntoALauncher) {
  // After argv[0] of node, npx or env the argument would reach the launcher, not Claude Code.
  for (const CommandLine& c :
       {CommandLine{{"node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"}, "/usr/bin/node", ""},
        CommandLine{{"npx", "@anthropic-ai/claude-code"}, "", ""},
        CommandLine{{"env", "A=1", "claude"}, "", ""}}) {
    ContributeResult r = run("claude-code", agent_run(GetParam(), c));
    for (const auto& n : r.nested) EXPECT_NE(n.kind, PX_NESTED_ARG) << c.argv[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, ClaudeCode, ::testing::Values(PX_PLATFORM_LINUX, PX_PLATFORM_MACOS),
                         [](const auto& test) {
                           return test.param == PX_PLATFORM_LINUX ? "linux" : "macos";
                         });

// ---- codex ---------------------------------------------------------------------

class Codex : public ::testing::TestWithParam<px_platform> {};

TEST_P(Codex, Contribution) {
  ContributeResult r = run("codex", agent_run(GetParam(), CommandLine{{"codex", "exec", "hi"}, "", ""}));
  EXPECT_TRUE(has_rw(r, "~/.codex"));
  EXPECT_EQ(r.paths.size(), 1u) << "only its own home";
  for (const char* kept : {"OPENAI_API_KEY", "OPENAI_ORG_ID", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY"})
    EXPECT_TRUE(r.keeps(kept)) << kept;
  for (const char* dropped : {"CODEX_HOME", "CODEX_SQLITE_HOME", "CODEX_GITHUB_PERSONAL_ACCESS_TOKEN",
                              "ANTHROPIC_API_KEY", "AZURE_CLIENT_SECRET"})
    EXPECT_FALSE(r.keeps(dropped)) << dropped;
  ASSERT_NE(r.config_dir("CODEX_HOME"), nullptr);
  EXPECT_EQ(r.config_dir("CODEX_HOME")->path, "~/.codex");
  // Its API keys are brokered: sent to OpenAI's API (or the base URL's host) only.
  ASSERT_EQ(r.credentials.size(), 2u);
  EXPECT_EQ(r.credentials[0].variable, "OPENAI_API_KEY");
  EXPECT_EQ(r.credentials[0].hosts, std::vector<std::string>{"api.openai.com"});
  EXPECT_EQ(r.credentials[0].base_url_variable, "OPENAI_BASE_URL");
  ASSERT_EQ(r.nested.size(), 1u);
  EXPECT_EQ(r.nested[0].kind, PX_NESTED_ARG);
  EXPECT_EQ(r.nested[0].value, R"(--config=sandbox_mode="danger-full-access")");
  std::vector<std::string> hosts;
  for (const auto& h : r.hosts) hosts.push_back(h.value);
  EXPECT_NE(std::find(hosts.begin(), hosts.end(), "api.openai.com"), hosts.end());
  EXPECT_NE(std::find(hosts.begin(), hosts.end(), "chatgpt.com"), hosts.end());
}

TEST_P(Codex, NoArgumentInsertedIntoNpx) {
  for (const CommandLine& c :
       {CommandLine{{"npx", "-y", "@openai/codex@latest"}, "", ""},
        CommandLine{{"node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"}, "", ""}}) {
    ContributeResult r = run("codex", agent_run(GetParam(), c));
    EXPECT_TRUE(r.nested.empty()) << c.argv[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Platforms, Codex, ::testing::Values(PX_PLATFORM_LINUX, PX_PLATFORM_MACOS),
                         [](const auto& test) {
                           return test.param == PX_PLATFORM_LINUX ? "linux" : "macos";
                         });

// ---- opencode ------------------------------------------------------------------

class Opencode : public ::testing::TestWithParam<px_platform> {};

TEST_P(Opencode, Contribution) {
  ContributeResult r = run("opencode", agent_run(GetParam(), CommandLine{{"opencode"}, "", ""}));
  for (const char* p :
       {"~/.config/opencode", "~/.local/share/opencode", "~/.local/state/opencode", "~/.cache/opencode"})
    EXPECT_TRUE(has_rw(r, p)) << p;
  for (const char* kept : {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                           "GOOGLE_GENERATIVE_AI_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_API_KEY"})
    EXPECT_TRUE(r.keeps(kept)) << kept;
  EXPECT_FALSE(r.keeps("OPENCODE_DB"));
  const std::pair<const char*, const char*> xdg[] = {{"XDG_CONFIG_HOME", "~/.config"},
                                                     {"XDG_DATA_HOME", "~/.local/share"},
                                                     {"XDG_STATE_HOME", "~/.local/state"},
                                                     {"XDG_CACHE_HOME", "~/.cache"}};
  for (auto [var, path] : xdg) {
    ASSERT_NE(r.config_dir(var), nullptr) << var;
    EXPECT_EQ(r.config_dir(var)->path, path);
  }
  EXPECT_TRUE(r.nested.empty()) << "opencode has no sandbox of its own";
  ASSERT_FALSE(r.hosts.empty());
  EXPECT_EQ(r.hosts[0].value, "opencode.ai");
}

INSTANTIATE_TEST_SUITE_P(Platforms, Opencode, ::testing::Values(PX_PLATFORM_LINUX, PX_PLATFORM_MACOS),
                         [](const auto& test) {
                           return test.param == PX_PLATFORM_LINUX ? "linux" : "macos";
                         });

// ---- generic -------------------------------------------------------------------

TEST(Generic, ContributesNothing) {
  for (px_platform pf : {PX_PLATFORM_LINUX, PX_PLATFORM_MACOS}) {
    ContributeResult r = run("generic", agent_run(pf, CommandLine{{"make", "test"}, "/usr/bin/make", ""}));
    EXPECT_TRUE(r.paths.empty());
    EXPECT_TRUE(r.executable_dirs.empty());
    EXPECT_TRUE(r.env.empty());
    EXPECT_TRUE(r.config_dirs.empty());
    EXPECT_TRUE(r.nested.empty());
    EXPECT_TRUE(r.hosts.empty());
  }
}

// ---- executable dirs, from a real file tree ----------------------------------------

class InstallDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = fs::temp_directory_path() / ("px-home-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(home_);
    fs::create_directories(home_);
    home_ = fs::canonical(home_);
  }
  void TearDown() override { fs::remove_all(home_); }
  fs::path touch(const std::string& rel) {
    fs::path p = home_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x";
    return p;
  }
  ContributeArgs args(const CommandLine& c) {
    ContributeArgs a;
    a.user_home = home_.string();
    a.run_home = home_.string();
    a.run_folder = (home_ / "code").string();
    a.command = c;
    return a;
  }
  static std::vector<std::string> dirs(const ContributeResult& r) {
    std::vector<std::string> out;
    for (const auto& d : r.executable_dirs) out.push_back(d.value);
    return out;
  }
  fs::path home_;
};

TEST_F(InstallDirs, NvmInstallOfClaudeCodeWithItsPlatformPackage) {
  const std::string nm = ".nvm/versions/node/v20.20.2/lib/node_modules";
  fs::path exe = touch(nm + "/@anthropic-ai/claude-code/bin/claude.exe");
  touch(nm + "/@anthropic-ai/claude-code-linux-x64/claude");
  touch(nm + "/@anthropic-ai/sdk/index.js");  // another package of the scope: not offered
  fs::create_directories(home_ / ".nvm/versions/node/v20.20.2/bin");
  fs::create_symlink(exe, home_ / ".nvm/versions/node/v20.20.2/bin/claude");
  ContributeResult r = run("claude-code", args({{"claude"},
                                                (home_ / ".nvm/versions/node/v20.20.2/bin/claude").string(),
                                                fs::canonical(exe).string()}));
  std::vector<std::string> want{(home_ / nm / "@anthropic-ai/claude-code").string(),
                                (home_ / nm / "@anthropic-ai/claude-code-linux-x64").string()};
  EXPECT_EQ(dirs(r), want);
}

TEST_F(InstallDirs, NodeWrapperScriptInHome) {
  fs::path script = touch("tools/node_modules/@openai/codex/bin/codex.js");
  touch("tools/node_modules/@openai/codex/node_modules/@openai/codex-linux-x64/vendor/codex");
  ContributeResult r =
      run("codex", args({{"node", script.string(), "exec"}, "/usr/bin/node", "/usr/bin/node"}));
  EXPECT_EQ(dirs(r), std::vector<std::string>{(home_ / "tools/node_modules/@openai/codex").string()});
}

TEST_F(InstallDirs, OpencodeCurlInstaller) {
  fs::path exe = touch(".opencode/bin/opencode");
  ContributeResult r = run("opencode", args({{"opencode"}, exe.string(), exe.string()}));
  EXPECT_EQ(dirs(r), std::vector<std::string>{(home_ / ".opencode/bin").string()});
}

TEST_F(InstallDirs, ClaudeNativeInstaller) {
  fs::path exe = touch(".local/share/claude/versions/2.1.197");
  ContributeResult r =
      run("claude-code", args({{"claude"}, (home_ / ".local/bin/claude").string(), exe.string()}));
  EXPECT_EQ(dirs(r), std::vector<std::string>{(home_ / ".local/share/claude/versions").string()});
}

TEST_F(InstallDirs, NothingForASystemInstallOrAPlainBinaryInHome) {
  EXPECT_TRUE(
      dirs(run("claude-code", args({{"claude"},
                                    "/usr/bin/claude",
                                    "/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"})))
          .empty());
  fs::path exe = touch("bin/codex");  // ~/bin holds other things: never offered
  EXPECT_TRUE(dirs(run("codex", args({{"codex"}, exe.string(), exe.string()}))).empty());
}

}  // namespace
