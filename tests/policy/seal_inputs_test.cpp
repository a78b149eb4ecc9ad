// The policy's side of issue 16: files other programs run later (project
// files, declared by plugins and the default profile) and the opt-out,
// variables passed on purpose, the locale variables by name, Local servers
// by port, Parallex's own state denied, the run's tool caches.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "policy/compose.hpp"
#include "policy/local_servers.hpp"
#include "policy/own_state.hpp"
#include "policy/policy_builder.hpp"
#include "policy/profile.hpp"
#include "policy/tool_caches.hpp"

namespace px::policy {
namespace {

namespace fs = std::filesystem;

std::string parse_error_of(const std::string& yaml) {
  auto p = parse_profile(yaml, "bad.yaml");
  EXPECT_FALSE(p.has_value()) << "expected an error for:\n" << yaml;
  return p ? std::string() : p.error().message;
}

class SealInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/px-seal-inputs-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    root_ = templ;
    fs::create_directories(root_ / "home");
    fs::create_directories(root_ / "work/.git");
    in_.user_home = root_ / "home";
    in_.run_folder = root_ / "work";
    in_.temp_dir = root_ / "runtime/run-1/tmp";
    auto d = load_profile("default");
    ASSERT_TRUE(d) << d.error().message;
    in_.profiles.push_back(d.value());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Policy compose_ok() {
    auto p = compose(in_);
    EXPECT_TRUE(p) << p.error().message;
    return std::move(p).value();
  }
  std::string compose_error() {
    auto p = compose(in_);
    EXPECT_FALSE(p);
    return p ? std::string() : p.error().message;
  }
  fs::path root_;
  ComposeInputs in_;
};

TEST_F(SealInputs, ProjectFilesFromPluginsAndTheProfileAreReadOnlyWithTheirOrigin) {
  in_.project_files.push_back(
      {"claude-code", "Claude Code", {{".mcp.json", "MCP servers"}, {".claude/hooks", "hooks"}}});
  in_.project_files.push_back({"codex", "Codex", {{".codex", "config"}}});
  const Policy p = compose_ok();
  const fs::path w = root_ / "work";
  for (const char* path :
       {".mcp.json", ".claude/hooks/x.sh", ".codex/config.toml", ".vscode/tasks.json", ".envrc",
        ".husky/pre-commit", ".gitmodules", ".pre-commit-config.yaml", ".devcontainer/x"})
    EXPECT_FALSE(p.may_write(w / path)) << path;
  EXPECT_TRUE(p.may_write(w / ".claude/worktrees/x"));
  EXPECT_TRUE(p.may_write(w / "CLAUDE.md"));
  std::map<fs::path, std::string> origins;
  for (const auto* r : p.project_files()) origins[r->path] = r->origin.describe();
  EXPECT_EQ(origins[w / ".mcp.json"], "plugin claude-code");
  EXPECT_EQ(origins[w / ".codex"], "plugin codex");
  EXPECT_NE(origins[w / ".vscode"].find("default.yaml"), std::string::npos);
  // .git's files are checked by what they say, not listed as project files.
  EXPECT_EQ(origins.count(w / ".git/hooks"), 0u);
  EXPECT_EQ(origins.count(w / ".git/config"), 0u);
}

TEST_F(SealInputs, TheOptOutIsAWeakening) {
  in_.dangerously_writable.push_back(root_ / "work/.vscode");
  const Policy p = compose_ok();
  EXPECT_TRUE(p.may_write(root_ / "work/.vscode/tasks.json"));
  EXPECT_FALSE(p.may_write(root_ / "work/.envrc"));
  ASSERT_EQ(p.weakenings().size(), 1u);
  EXPECT_NE(p.weakenings().front().find("dangerously_writable " + (root_ / "work/.vscode").string()),
            std::string::npos);
  EXPECT_NE(p.weakenings().front().find("--dangerously-writable"), std::string::npos);

  in_.dangerously_writable = {root_ / "work/src"};
  EXPECT_NE(compose_error().find("is not a read-only path"), std::string::npos);

  auto profile =
      parse_profile("filesystem:\n  dangerously_writable: [\"{run_folder}/.envrc\"]\n", "mine.yaml");
  ASSERT_TRUE(profile) << profile.error().message;
  in_.dangerously_writable.clear();
  in_.profiles.push_back(profile.value());
  const Policy q = compose_ok();
  EXPECT_TRUE(q.may_write(root_ / "work/.envrc"));
  EXPECT_NE(q.weakenings().front().find("mine.yaml:2"), std::string::npos);
}

TEST_F(SealInputs, VariablesPassedOnPurposeBeatStripAndBadNamesAreRefused) {
  in_.env_flags = {"GITHUB_TOKEN", "MY_SETTING=on"};
  const Policy p = compose_ok();
  const auto env = p.environment().apply({{"GITHUB_TOKEN", "t"},
                                          {"GH_TOKEN", "g"},
                                          {"LC_TOKEN", "x"},
                                          {"LC_ALL", "C"},
                                          {"LC_CTYPE", "C.UTF-8"},
                                          {"LANG", "C"}});
  EXPECT_EQ(env.count("GITHUB_TOKEN"), 1u);
  EXPECT_EQ(env.count("GH_TOKEN"), 0u);
  EXPECT_EQ(env.at("MY_SETTING"), "on");
  EXPECT_EQ(env.count("LC_TOKEN"), 0u) << "only the locale variables by name";
  EXPECT_EQ(env.count("LC_ALL"), 1u);
  EXPECT_EQ(env.count("LC_CTYPE"), 1u);
  for (const char* bad : {"1BAD", "A-B", "=x", "A B=c", ""}) {
    in_.env_flags = {bad};
    EXPECT_NE(compose_error().find("is not a variable name"), std::string::npos) << bad;
  }
  EXPECT_NE(parse_error_of("environment:\n  pass: [\"NOT-A-NAME\"]\n").find("bad.yaml:2"), std::string::npos);
}

TEST_F(SealInputs, LocalServersByPort) {
  auto two = parse_local_servers("5432,3000,3000", "--local-servers");
  ASSERT_TRUE(two);
  EXPECT_EQ(two.value().ports, (std::vector<std::uint16_t>{3000, 5432}));
  EXPECT_EQ(two.value().describe(), "ports 3000,5432");
  EXPECT_TRUE(parse_local_servers("", "x").value().on);
  EXPECT_TRUE(parse_local_servers("", "x").value().ports.empty());
  EXPECT_FALSE(parse_local_servers("off", "x").value().on);
  for (const char* bad : {"0", "70000", "3000,", "a", "3000;5432"})
    EXPECT_FALSE(parse_local_servers(bad, "x")) << bad;
  in_.network.allow = {"example.com"};
  in_.network.local_servers = true;
  in_.network.local_server_ports = {3000};
  const Policy p = compose_ok();
  EXPECT_TRUE(p.may_connect("localhost", 3000));
  EXPECT_FALSE(p.may_connect("localhost", 5432));
  auto profile = parse_profile("network:\n  local_servers: [5432]\n", "p.yaml");
  ASSERT_TRUE(profile) << profile.error().message;
  EXPECT_EQ(profile.value().local_server_ports, (std::vector<std::uint16_t>{5432}));
  EXPECT_NE(parse_error_of("network:\n  local_servers: [99999]\n").find("99999"), std::string::npos);
}

TEST_F(SealInputs, ParallexsOwnStateIsDeniedExceptWhatTheRunNeeds) {
  const fs::path data = root_ / "data";
  for (const char* d : {"agents/me/home", "agents/me/keys", "agents/me/gh", "agents/me/snapshots",
                        "agents/me/runs", "agents/other/gh", "runs", "plugins"})
    fs::create_directories(data / d);
  std::ofstream(data / "agents/me/agent.yaml") << "x";
  in_.own_state =
      OwnState{{data, root_ / "runtime"}, {data / "agents/me/home", data / "agents/me/keys", in_.temp_dir}};
  in_.grants.push_back({data, Access::write, "--grant"});  // a grant that covers it all
  const Policy p = compose_ok();
  EXPECT_FALSE(p.may_read(data / "agents/other/gh/hosts.yml"));
  EXPECT_FALSE(p.may_write(data / "agents/me/agent.yaml"));
  EXPECT_FALSE(p.may_read(data / "agents/me/snapshots/x"));
  EXPECT_FALSE(p.may_read(data / "runs/x/run.json"));
  EXPECT_FALSE(p.may_write(data / "plugins/evil.so"));
  EXPECT_TRUE(p.may_write(data / "agents/me/home/notes"));
  EXPECT_TRUE(p.may_read(data / "agents/me/keys/id_ed25519"));
  EXPECT_TRUE(p.may_write(in_.temp_dir / "x"));
  EXPECT_NE(p.explain_read(data / "runs").rule.find("Parallex's own state"), std::string::npos);
  in_.run_folder = data / "runs";
  EXPECT_NE(compose_error().find("inside Parallex's own state"), std::string::npos);
}

TEST_F(SealInputs, ToolCachesPerRunForAdhocRunsNeverTheUsersOwn) {
  Policy p = compose_ok();
  std::map<std::string, std::string> set;
  for (const auto& s : p.environment().set) set[s.name] = s.value;
  EXPECT_EQ(set["npm_config_cache"], "/tmp/tool-caches/npm") << "inside the Linux seal {temp} is /tmp";
  EXPECT_EQ(set["PIP_CACHE_DIR"], "/tmp/tool-caches/pip");
  EXPECT_EQ(set["MAVEN_OPTS"], "-Dmaven.repo.local=/tmp/tool-caches/m2");
  EXPECT_FALSE(p.may_write(root_ / "home/.npm/x"));
  // An agent's tools keep theirs in its own home.
  in_.agent = AgentInputs{};
  in_.agent->name = "a";
  in_.agent->home = root_ / "agent-home";
  const Policy agent_run = compose_ok();
  for (const auto& s : agent_run.environment().set) EXPECT_NE(s.name, "npm_config_cache");
  in_.agent.reset();
  // A folder of the user's: it must exist and must not hold the user's own caches.
  auto with = [&](const std::string& value) {
    auto profile = parse_profile("tool_caches: " + value + "\n", "caches.yaml");
    EXPECT_TRUE(profile) << profile.error().message;
    in_.profiles.resize(1);
    in_.profiles.push_back(profile.value());
    return compose(in_);
  };
  auto missing = with((root_ / "no-such").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(
      missing.error().message.find((root_ / "no-such").string() + " (profile caches.yaml:1) does not exist"),
      std::string::npos)
      << missing.error().message;
  fs::create_directories(root_ / "home/.npm");
  auto own = with("~/.npm");
  ASSERT_FALSE(own);
  EXPECT_NE(own.error().message.find("your own tool caches"), std::string::npos) << own.error().message;
  fs::create_directories(root_ / "caches");
  auto mine = with((root_ / "caches").string());
  ASSERT_TRUE(mine) << mine.error().message;
  EXPECT_TRUE(mine.value().may_write(root_ / "caches/npm/x"));
  auto off = with("off");
  ASSERT_TRUE(off);
  for (const auto& s : off.value().environment().set) EXPECT_NE(s.name, "npm_config_cache");
  EXPECT_NE(parse_error_of("tool_caches: somewhere\n").find("per_run, overlay, off, or a folder"),
            std::string::npos);
}

TEST_F(SealInputs, ToolCachesOverlayShowsTheUsersExistingCachesOnly) {
  const fs::path home = root_ / "home";
  fs::create_directories(home / ".npm");
  fs::create_directories(home / ".cache/pip");
  fs::create_directories(home / "elsewhere");
  fs::create_symlink(home / "elsewhere", home / "go");  // a link is never a layer
  fs::create_directories(home / ".cargo/registry");     // cargo's home holds credentials: never a layer
  auto profile = parse_profile("tool_caches: overlay\n", "dev.yaml");
  ASSERT_TRUE(profile) << profile.error().message;
  in_.profiles.push_back(profile.value());
  const Policy p = compose_ok();
  std::map<fs::path, fs::path> layers;
  for (const auto& c : p.cache_layers()) layers[c.lower] = c.view;
  EXPECT_EQ(layers, (std::map<fs::path, fs::path>{{home / ".npm", "/tmp/tool-caches/npm"},
                                                  {home / ".cache/pip", "/tmp/tool-caches/pip"}}));
  for (const auto& c : p.cache_layers()) EXPECT_EQ(c.origin.describe(), "profile dev.yaml:1");
  EXPECT_FALSE(p.may_write(home / ".npm/x")) << "the user's own cache is never writable";
  std::map<std::string, std::string> set;
  for (const auto& s : p.environment().set) set[s.name] = s.value;
  EXPECT_EQ(set["npm_config_cache"], "/tmp/tool-caches/npm") << "the variables are per_run's";
  // A cache the policy hides, or holding a path it hides, is no layer.
  auto hide =
      parse_profile("filesystem:\n  deny:\n    - {path: ~/.cache/pip/secret, reason: test}\n", "hide.yaml");
  ASSERT_TRUE(hide) << hide.error().message;
  in_.profiles.push_back(hide.value());
  const Policy hidden = compose_ok();
  ASSERT_EQ(hidden.cache_layers().size(), 1u);
  EXPECT_EQ(hidden.cache_layers()[0].lower, home / ".npm");
  in_.profiles.pop_back();
  // Seatbelt has no layers: per_run there.
  in_.platform = Platform::macos;
  EXPECT_TRUE(compose_ok().cache_layers().empty());
}

}  // namespace
}  // namespace px::policy
