// The broker's entries of the Policy (docs/broker.md, "In a run"): a
// profile's credentials and request rules with their origin, the defaults
// (a held token, a plugin's provider key) amended or dropped by name, and
// the checks that stop a run before anything starts.
#include <gtest/gtest.h>

#include "contains.hpp"
#include "policy/compose.hpp"
#include "policy/profile.hpp"

namespace px::policy {
namespace {

using px::test::expect_contains;

// The default profile, a run folder, the network allowing `allow`, and the
// profile `yaml` (named user.yaml) over it.
ComposeInputs inputs(const std::string& yaml,
                     std::vector<std::string> allow = {"github.com", "api.github.com"}) {
  ComposeInputs in;
  in.user_home = "/home/u";
  in.run_folder = "/home/u/src/app";
  in.temp_dir = "/tmp/px-run";
  auto def = load_profile("default");
  EXPECT_TRUE(def.has_value());
  in.profiles.push_back(def.value());
  if (!yaml.empty()) {
    auto user = parse_profile(yaml, "user.yaml");
    EXPECT_TRUE(user.has_value()) << user.error().message;
    if (user) in.profiles.push_back(user.value());
  }
  in.network.allow = std::move(allow);
  return in;
}

// The agent's token as the run path gives it: held by parallex, no value in the Policy.
BrokeredCredential held_github_token() {
  BrokeredCredential c;
  c.spec.name = "github";
  c.spec.source = broker::SecretSource::from_value({}, "agent bot's token");
  c.spec.hosts = {"github.com", "api.github.com", "uploads.github.com"};
  c.spec.env = {"GH_TOKEN"};
  c.spec.shape = "github-token";
  c.origin = Origin::agent("bot");
  return c;
}

const BrokeredCredential* find(const Policy& p, const std::string& name) {
  for (const auto& c : p.credentials())
    if (c.spec.name == name) return &c;
  return nullptr;
}

TEST(BrokerPolicy, AProfilesCredentialAndRulesKeepTheirOrigin) {
  auto p =
      compose(inputs("credentials:\n"
                     "  github:\n"
                     "    secret: {command: [pass, show, github/agent]}\n"
                     "    hosts: [GitHub.com, api.github.com]\n"
                     "    env: [GH_TOKEN]\n"
                     "requests:\n"
                     "  github.com:\n"
                     "    - allow: GET,HEAD /**\n"
                     "    - deny: \"* /**\"\n"
                     "      reason: read-only\n"));
  ASSERT_TRUE(p.has_value()) << p.error().message;
  const auto* c = find(p.value(), "github");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->spec.hosts, (std::vector<std::string>{"api.github.com", "github.com"}))
      << "normalized, sorted";
  EXPECT_EQ(c->spec.source.kind, broker::SecretSource::Kind::command);
  EXPECT_EQ(c->origin.describe(), "profile user.yaml:2");
  ASSERT_EQ(p.value().request_rules().size(), 1u);
  const auto& rules = p.value().request_rules()[0];
  EXPECT_EQ(rules.host, "github.com");
  ASSERT_EQ(rules.rules.size(), 2u);
  EXPECT_EQ(rules.rules[1].text(), "deny * /**");
}

TEST(BrokerPolicy, ACredentialWithoutSecretAmendsTheDefaultOfThatName) {
  auto in =
      inputs("credentials:\n  github:\n    hosts: [ghe.corp.example]\n", {"github.com", "ghe.corp.example"});
  in.default_credentials.push_back(held_github_token());
  auto p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  const auto* c = find(p.value(), "github");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->spec.hosts, std::vector<std::string>{"ghe.corp.example"});
  EXPECT_EQ(c->spec.source.kind, broker::SecretSource::Kind::value) << "the secret stays where it was";
  EXPECT_EQ(c->spec.env, std::vector<std::string>{"GH_TOKEN"}) << "the keys not given are kept";
  EXPECT_EQ(c->spec.shape, "github-token");
  EXPECT_EQ(c->origin.describe(), "profile user.yaml:2");
}

TEST(BrokerPolicy, AnAmendmentOfNothingIsAnErrorNamingIt) {
  auto p = compose(inputs("credentials:\n  mine:\n    hosts: [github.com]\n"));
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"user.yaml:2", "\"mine\"", "gives no secret", "secret: {command"});
}

TEST(BrokerPolicy, OffDropsADefault) {
  auto in = inputs("credentials:\n  github: off\n");
  in.default_credentials.push_back(held_github_token());
  auto p = compose(in);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(find(p.value(), "github"), nullptr);
}

TEST(BrokerPolicy, AHostTheRunCannotReachIsAnErrorForWhatTheUserWrote) {
  auto p =
      compose(inputs("credentials:\n  c:\n    secret: {env: TOKEN}\n    hosts: [github.com, gihtub.com]\n"));
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"\"c\"", "user.yaml:2", "gihtub.com",
                                      "no network rule lets the run reach", "--allow gihtub.com"});

  p = compose(inputs("requests:\n  elsewhere.example:\n    - allow: GET /**\n"));
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"request rules for elsewhere.example", "user.yaml:2"});

  // A subdomain a host rule covers is reachable.
  EXPECT_TRUE(compose(inputs("requests:\n  uploads.github.com:\n    - allow: GET /**\n")).has_value());

  // The defaults are bound whether or not the run reaches their hosts.
  auto in = inputs("", {"api.anthropic.com"});
  in.default_credentials.push_back(held_github_token());
  auto d = compose(in);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_NE(find(d.value(), "github"), nullptr);

  // Online reaches every host: nothing to check.
  auto online = inputs("credentials:\n  c:\n    secret: {env: TOKEN}\n    hosts: [gihtub.com]\n", {});
  online.network.online = true;
  EXPECT_TRUE(compose(online).has_value());
}

TEST(BrokerPolicy, ACredentialBoundToAPassthroughHostIsAnError) {
  auto p =
      compose(inputs("requests:\n  github.com: passthrough\n"
                     "credentials:\n  c:\n    secret: {env: TOKEN}\n    hosts: [github.com]\n"));
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"\"c\"", "github.com", "passthrough", "could never swap it in"});
}

TEST(BrokerPolicy, OneVariableForTwoCredentialsIsAnError) {
  auto in = inputs(
      "credentials:\n  other:\n    secret: {env: OTHER}\n    hosts: [github.com]\n"
      "    env: [GH_TOKEN]\n");
  in.default_credentials.push_back(held_github_token());
  auto p = compose(in);
  ASSERT_FALSE(p.has_value());
  expect_contains(p.error().message, {"GH_TOKEN", "\"github\"", "\"other\""});
}

TEST(BrokerPolicy, MalformedEntriesNameFileLineAndKey) {
  struct Case {
    std::string yaml;
    std::vector<const char*> says;
  };
  const std::vector<Case> cases = {
      {"requests:\n  github.com:\n    - allow: GTE /x\n", {"user.yaml:3", "\"GTE\" is not an HTTP method"}},
      {"requests:\n  github.com:\n    - allow: GET x\n", {"user.yaml:3", "starts with '/'"}},
      {"credentials:\n  c:\n    secret: {file: relative/token}\n    hosts: [github.com]\n",
       {"\"c\"", "not an absolute path"}},
      {"credentials:\n  c:\n    secret: {command: []}\n    hosts: [github.com]\n",
       {"credentials.c.secret.command", "empty"}},
      {"credentials:\n  c:\n    secret: {env: T}\n    hosts: [github.com]\n    shape: gh\n", {"shape"}},
      {"credentials:\n  c:\n    secret: {env: T}\n", {"credentials.c", "needs 'hosts'"}},
      {"credentials:\n  c: {}\n", {"user.yaml:2", "needs 'secret'"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    std::string message;
    auto profile = parse_profile(c.yaml, "user.yaml");
    if (!profile) {
      message = profile.error().message;
    } else {
      auto in = inputs("");
      in.profiles.push_back(profile.value());
      auto p = compose(in);
      ASSERT_FALSE(p.has_value());
      message = p.error().message;
    }
    for (const char* part : c.says)
      EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

}  // namespace
}  // namespace px::policy
