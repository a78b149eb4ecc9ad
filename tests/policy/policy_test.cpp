// Unit tests of the Policy's inputs: profile parsing (errors name file, line
// and key), PolicyBuilder (first error wins, deny beats allow), and
// composition (a plugin cannot widen the seal).
#include <gtest/gtest.h>

#include "contains.hpp"
#include "policy/compose.hpp"
#include "policy/policy_builder.hpp"
#include "policy/policy_json.hpp"
#include "policy/profile.hpp"
#include "policy/profile_json.hpp"

namespace px::policy {
namespace {

std::string parse_error(const std::string& yaml) {
  auto p = parse_profile(yaml, "bad.yaml");
  EXPECT_FALSE(p.has_value()) << "expected an error for:\n" << yaml;
  return p ? std::string() : p.error().message;
}

using px::test::expect_contains;

TEST(ProfileParsing, EmbeddedProfilesParse) {
  for (const char* name : {"default", "offline", "developer"}) {
    auto p = load_profile(name);
    ASSERT_TRUE(p.has_value()) << name << ": " << p.error().message;
    EXPECT_FALSE(p.value().description.empty()) << name;
  }
}

TEST(ProfileParsing, MalformedYamlNamesFileAndLine) {
  expect_contains(parse_error("version: 1\nfilesystem:\n  read: [/usr\n"), {"bad.yaml:", "malformed YAML"});
  expect_contains(parse_error("version: 1\nnetwork: {mode: offline\n"), {"bad.yaml:", "malformed"});
}

TEST(ProfileParsing, UnknownKeyNamesFileLineAndKey) {
  expect_contains(parse_error("version: 1\nfilesystem:\n  reed: [/usr]\n"),
                  {"bad.yaml:3", "filesystem.reed", "unknown key"});
  expect_contains(parse_error("version: 1\nnetwrok: {}\n"), {"bad.yaml:2", "netwrok", "unknown key"});
  expect_contains(parse_error("filesystem:\n  read:\n    - {path: /usr, why: x}\n"), {"bad.yaml:3", "why"});
}

TEST(ProfileParsing, WrongTypeNamesFileLineAndKey) {
  expect_contains(parse_error("network:\n  local_servers: maybe\n"),
                  {"bad.yaml:2", "network.local_servers", "true or false"});
  expect_contains(parse_error("filesystem:\n  read: /usr\n"), {"bad.yaml:2", "filesystem.read", "list"});
  expect_contains(parse_error("network:\n  mode: sometimes\n"), {"bad.yaml:2", "network.mode", "sometimes"});
  expect_contains(parse_error("network:\n  ports: [80, 70000]\n"), {"bad.yaml:2", "network.ports", "70000"});
  expect_contains(parse_error("version: 2\n"), {"bad.yaml:1", "version"});
  expect_contains(parse_error("filesystem:\n  forbid_new_git: [yes]\n"),
                  {"bad.yaml:2", "filesystem.forbid_new_git"});
}

TEST(ProfileParsing, RelativePathIsRefused) {
  expect_contains(parse_error("filesystem:\n  read:\n    - /usr\n    - src/lib\n"),
                  {"bad.yaml:4", "filesystem.read", "src/lib", "relative"});
  expect_contains(parse_error("filesystem:\n  deny: [\"~user/.ssh\"]\n"),
                  {"bad.yaml:2", "filesystem.deny", "relative"});
}

TEST(ProfileParsing, BadHostPatternsAreRefused) {
  auto host_error = [](const std::string& host) {
    return parse_error("network:\n  mode: allowlist\n  allow:\n    - \"" + host + "\"\n");
  };
  expect_contains(host_error("https://github.com"), {"bad.yaml:4", "network.allow", "scheme"});
  expect_contains(host_error("github.com/orgs"), {"bad.yaml:4", "network.allow", "path"});
  expect_contains(host_error("github.com:0"), {"bad.yaml:4", "network.allow", "port"});
  expect_contains(host_error("github.com:22-23"), {"bad.yaml:4", "network.allow", "one port per rule"});
  expect_contains(host_error("com"), {"bad.yaml:4", "network.allow", "public suffix"});
  expect_contains(host_error("git*.com"), {"bad.yaml:4", "network.allow", "wildcard"});
  expect_contains(host_error("github.*"), {"bad.yaml:4", "wildcard"});
  expect_contains(host_error("*"), {"bad.yaml:4"});
  expect_contains(host_error("10.0.0.1"), {"bad.yaml:4", "IP address"});
  expect_contains(host_error("user@github.com"), {"bad.yaml:4", "user part"});
  expect_contains(host_error("a..b"), {"bad.yaml:4", "empty label"});
  EXPECT_TRUE(
      parse_profile("network:\n  allow: [\"*.github.com\", GitHub.com, \"github.com:22\"]\n", "ok.yaml")
          .has_value());
}

TEST(ProfileParsing, MissingProfileListsTheBuiltIns) {
  auto p = load_profile("no-such-profile-xyz");
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"no-such-profile-xyz", "default", "developer", "offline"});
}

// ---------------------------------------------------------------------------

Origin flag() {
  return Origin::flag("--grant");
}

TEST(PolicyBuilderTest, FirstErrorWinsAndNamesTheInput) {
  PolicyBuilder b;
  b.run_folder("/w").allow("relative/dir", Access::read, "x", flag()).allow_host("https://x.org", flag());
  auto p = b.build();
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"relative/dir", "--grant", "absolute"});
}

TEST(PolicyBuilderTest, NoRunFolderIsAnError) {
  PolicyBuilder b;
  EXPECT_FALSE(b.build().has_value());
}

TEST(PolicyBuilderTest, DenyBeatsAllowWhateverTheOrder) {
  for (bool deny_first : {false, true}) {
    PolicyBuilder b;
    b.run_folder("/w").user_home("/home/u").allow_whole_home(true);
    if (deny_first) b.deny("/home/u/.ssh", "keys", Origin::profile("p.yaml", 3));
    b.allow("/home/u", Access::write, "everything", flag());
    b.allow("/home/u/.ssh/config", Access::write, "more specific", flag());
    if (!deny_first) b.deny("/home/u/.ssh", "keys", Origin::profile("p.yaml", 3));
    auto p = b.build();
    ASSERT_TRUE(p.has_value()) << p.error().message;
    EXPECT_TRUE(p.value().may_read("/home/u/notes"));
    EXPECT_FALSE(p.value().may_read("/home/u/.ssh/config"));
    EXPECT_FALSE(p.value().may_write("/home/u/.ssh/id_ed25519"));
    EXPECT_TRUE(p.value().may_read("/home/u/.sshd"));
    expect_contains(p.value().explain_read("/home/u/.ssh/id").rule, {"deny", "p.yaml:3", "keys"});
  }
}

TEST(PolicyBuilderTest, ReadOnlyBeatsAWritableRoot) {
  PolicyBuilder b;
  b.run_folder("/w").allow("/w", Access::write, "run", flag()).read_only("/w/.git/hooks", "hooks", flag());
  auto p = b.build();
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p.value().may_read("/w/.git/hooks/pre-commit"));
  EXPECT_FALSE(p.value().may_write("/w/.git/hooks/pre-commit"));
  EXPECT_TRUE(p.value().may_write("/w/.git/objects/x"));
}

TEST(PolicyBuilderTest, EmptyAllowlistIsOfflineAndOfflineHasNoLocalServers) {
  PolicyBuilder empty;
  empty.run_folder("/w").network(NetworkMode::allowlist, flag());
  auto p = empty.build();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p.value().network().mode, NetworkMode::offline);
  PolicyBuilder off;
  off.run_folder("/w").network(NetworkMode::offline, flag()).local_servers(true, flag());
  p = off.build();
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p.value().network().local_servers);
  EXPECT_FALSE(p.value().may_connect("localhost", 3000));
}

// --local-servers with no allowed host means "this machine's servers only",
// not offline: the proxy runs and reaches localhost, nothing else.
TEST(PolicyBuilderTest, LocalServersAloneAreLocalServersOnly) {
  PolicyBuilder b;
  b.run_folder("/w").network(NetworkMode::allowlist, flag()).local_servers(true, flag());
  auto p = b.build();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p.value().network().mode, NetworkMode::allowlist);
  EXPECT_TRUE(p.value().network().local_servers);
  EXPECT_TRUE(p.value().may_connect("localhost", 3000));
  EXPECT_FALSE(p.value().may_connect("example.com", 443));
}

TEST(PolicyBuilderTest, BadPortIsRefused) {
  PolicyBuilder b;
  b.run_folder("/w").allow_port(0, flag());
  auto p = b.build();
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"port 0"});
}

// ---------------------------------------------------------------------------

// The built-in profiles are parsed when parallex is built and decoded at run
// time: what a run gets must be exactly what parsing the YAML gives, every
// field of it (a field the stored form forgot would change the policy).
TEST(BuiltInProfiles, DecodedFromTheBuildAsParsedFromTheirText) {
  ASSERT_FALSE(embedded_profiles().empty());
  for (const auto& e : embedded_profiles()) {
    auto parsed = parse_profile(e.text, std::string(e.name) + ".yaml");
    ASSERT_TRUE(parsed) << parsed.error().message;
    auto decoded = load_profile(e.name);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(profile_to_json(parsed.value()), profile_to_json(decoded.value())) << e.name;
    auto compose_with = [](const Profile& p) {
      ComposeInputs in;
      in.user_home = "/home/u";
      in.run_folder = "/home/u/src/app";
      in.temp_dir = "/tmp/px-run";
      in.profiles.push_back(p);
      return compose(in);
    };
    auto from_text = compose_with(parsed.value());
    auto from_build = compose_with(decoded.value());
    ASSERT_EQ(from_text.has_value(), from_build.has_value()) << e.name;
    if (from_text) {
      EXPECT_EQ(to_json(from_text.value()), to_json(from_build.value())) << e.name;
    }
  }
}

ComposeInputs base_inputs() {
  ComposeInputs in;
  in.user_home = "/home/u";
  in.run_folder = "/home/u/src/app";
  in.temp_dir = "/tmp/px-run";
  auto def = load_profile("default");
  EXPECT_TRUE(def.has_value());
  in.profiles.push_back(def.value());
  return in;
}

HarnessContribution plugin_with(std::string path, Access access) {
  HarnessContribution h;
  h.plugin = "evil-plugin";
  h.harness = "Evil";
  using Kind = HarnessContribution::Path::Kind;
  h.paths.push_back({std::move(path), access == Access::write ? Kind::read_write : Kind::read, "wants it"});
  return h;
}

TEST(ComposeTest, DefaultProfileEntriesCarryTheirOrigin) {
  auto p = compose(base_inputs());
  ASSERT_TRUE(p.has_value()) << p.error().message;
  expect_contains(p.value().explain_read("/usr/bin/env").rule, {"default.yaml:", "system programs"});
  expect_contains(p.value().explain_read("/home/u/.ssh/id_ed25519").rule,
                  {"deny", "default.yaml:", "SSH keys"});
}

// The process limit: 4096 by default (the default profile says so, with its
// line), a later profile's replaces it, an agent's wins over both; a value out
// of range names the file, the line and the range.
TEST(ComposeTest, TheProcessLimitComesFromTheLastLayerThatSetsIt) {
  auto p = compose(base_inputs());
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().process_limit().max, 4096u);
  expect_contains(p.value().process_limit().origin.describe(), {"default.yaml:"});
  EXPECT_EQ(to_json(p.value(), true)["limits"]["processes"], 4096);

  auto more = parse_profile("limits:\n  processes: 8192\n", "more.yaml");
  ASSERT_TRUE(more.has_value()) << more.error().message;
  auto in = base_inputs();
  in.profiles.push_back(more.value());
  p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().process_limit().max, 8192u);
  expect_contains(p.value().process_limit().origin.describe(), {"more.yaml:2"});

  in.agent = AgentInputs{};
  in.agent->name = "a";
  in.agent->home = "/home/u/agents/a";
  in.agent->processes = 1000;
  p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().process_limit().max, 1000u);
  expect_contains(p.value().process_limit().origin.describe(), {"agent a"});

  expect_contains(parse_error("limits:\n  processes: 10\n"),
                  {"bad.yaml:2", "limits.processes", "32 to 4000000"});
  expect_contains(parse_error("limits:\n  processes: lots\n"), {"bad.yaml:2", "limits.processes", "lots"});
  expect_contains(parse_error("limits:\n  memory: 1G\n"), {"bad.yaml:2", "limits.memory", "unknown key"});
}

TEST(ComposeTest, APluginCannotGrantTheWholeHome) {
  for (const char* path : {"~", "/home/u", "/home", "~/"}) {
    auto in = base_inputs();
    in.harness = plugin_with(path, Access::read);
    auto p = compose(in);
    ASSERT_FALSE(p.has_value()) << path;
    EXPECT_EQ(p.error().kind, ErrorKind::policy) << path;
    expect_contains(p.error().message, {"evil-plugin", "all of", "/home/u"});
  }
}

TEST(ComposeTest, APluginCannotUnDenyASecretPath) {
  for (const char* path : {"~/.ssh", "~/.ssh/config", "~/.config/gh/hosts.yml", "/etc/shadow"}) {
    auto in = base_inputs();
    in.harness = plugin_with(path, Access::read);
    auto p = compose(in);
    ASSERT_FALSE(p.has_value()) << path;
    expect_contains(p.error().message, {"evil-plugin", "un-deny"});
  }
}

TEST(ComposeTest, APluginCannotWriteSystemPaths) {
  for (const char* path : {"/usr", "/usr/local/bin", "/etc/hosts", "/opt/tool"}) {
    auto in = base_inputs();
    in.harness = plugin_with(path, Access::write);
    auto p = compose(in);
    ASSERT_FALSE(p.has_value()) << path;
    expect_contains(p.error().message, {"evil-plugin", "outside the run's home"});
  }
  auto in = base_inputs();
  in.harness = plugin_with("/", Access::read);
  ASSERT_FALSE(compose(in).has_value());
}

TEST(ComposeTest, APluginCannotKeepEveryVariableOrGiveRelativePaths) {
  auto in = base_inputs();
  HarnessContribution h;
  h.plugin = "evil-plugin";
  h.env.push_back({HarnessContribution::Env::Action::keep, "*", "", "all of them"});
  in.harness = h;
  auto p = compose(in);
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"evil-plugin", "keeps every variable"});

  in = base_inputs();
  in.harness = plugin_with("relative/state", Access::read);
  p = compose(in);
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"evil-plugin", "relative/state"});
}

TEST(ComposeTest, APluginsOwnStateIsAllowedAndDenyStillWins) {
  auto in = base_inputs();
  HarnessContribution h;
  h.plugin = "good-plugin";
  h.paths.push_back({"~/.claude/projects", HarnessContribution::Path::Kind::read_write, "session state"});
  h.paths.push_back({"~/.claude.json", HarnessContribution::Path::Kind::read_write, "settings"});
  in.harness = h;
  auto p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_TRUE(p.value().may_write("/home/u/.claude/projects/x.jsonl"));
  EXPECT_FALSE(p.value().may_read("/home/u/.claude/other"));
  expect_contains(p.value().explain_write("/home/u/.claude.json").rule, {"plugin good-plugin"});
}

TEST(ComposeTest, AProfileThatOpensTheHomeNeedsTheDangerousSwitch) {
  auto in = base_inputs();
  auto wide = parse_profile("filesystem:\n  read: [\"~\"]\n", "wide.yaml");
  ASSERT_TRUE(wide.has_value());
  in.profiles.push_back(wide.value());
  auto p = compose(in);
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"wide.yaml:2", "dangerously_allow_home"});

  in = base_inputs();
  auto ok = parse_profile("dangerously_allow_home: true\nfilesystem:\n  read: [\"~\"]\n", "wide.yaml");
  ASSERT_TRUE(ok.has_value());
  in.profiles.push_back(ok.value());
  p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_TRUE(p.value().may_read("/home/u/Documents/x"));
  EXPECT_FALSE(p.value().may_read("/home/u/.ssh/id_ed25519"));
  ASSERT_EQ(p.value().weakenings().size(), 1u);
}

// `agent run NAME --local-servers` on an offline agent: this machine's
// servers only, as a plain run gets (not offline, which would leave a client
// pointed at localhost retrying for minutes). An online agent stays online,
// an allowlist keeps its hosts.
TEST(ComposeTest, LocalServersOnAnOfflineAgentMeanLocalServersOnly) {
  auto in = base_inputs();
  AgentInputs agent;
  agent.name = "bot";
  agent.home = "/var/px/agents/bot/home";
  agent.network_mode = NetworkMode::offline;
  in.agent = agent;
  in.network.local_servers = true;
  auto p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().network().mode, NetworkMode::allowlist);
  EXPECT_TRUE(p.value().network().local_servers);
  EXPECT_TRUE(p.value().may_connect("localhost", 8080));
  EXPECT_FALSE(p.value().may_connect("example.com", 443));

  in.agent->network_mode = NetworkMode::online;
  p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().network().mode, NetworkMode::online);

  in.agent->network_mode = NetworkMode::allowlist;
  in.agent->allow = {"github.com"};
  p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().network().mode, NetworkMode::allowlist);
  EXPECT_TRUE(p.value().may_connect("github.com", 443));
  EXPECT_TRUE(p.value().may_connect("localhost", 8080));

  // Without the flag the offline agent stays offline.
  in = base_inputs();
  in.agent = agent;
  p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p.value().network().mode, NetworkMode::offline);
}

TEST(ComposeTest, ContradictoryNetworkFlagsAreRefused) {
  auto in = base_inputs();
  in.network.online = true;
  in.network.offline = true;
  EXPECT_FALSE(compose(in).has_value());
  in = base_inputs();
  in.network.offline = true;
  in.network.allow = {"github.com"};
  EXPECT_FALSE(compose(in).has_value());
  in = base_inputs();
  in.network.offline = true;
  in.network.local_servers = true;
  auto p = compose(in);
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"--local-servers"});
  in = base_inputs();
  in.network.allow = {"https://github.com"};
  p = compose(in);
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"--allow", "scheme"});
}

}  // namespace
}  // namespace px::policy
