// workspace::prepare_inputs: the one place a workspaced run's seal, network
// and profile are decided from the project's config and the command line.
#include "workspace/run_inputs.hpp"

#include <gtest/gtest.h>

namespace px::workspace {
namespace {

Project project() {
  return Project{"/repo", "/repo/.git"};
}

ProjectConfig config(const std::string& yaml) {
  auto c = parse_project_config(yaml, "config.yaml");
  if (!c) {
    ADD_FAILURE() << c.error().message;
    return ProjectConfig{};
  }
  return c.value();
}

run::RunInputs prepared(const ProjectConfig& c, WorkspacedRunRequest request) {
  request.command = {"true"};
  auto in = prepare_inputs(project(), c, request);
  if (!in) {
    ADD_FAILURE() << in.error().message;
    return run::RunInputs{};
  }
  return std::move(in).value();
}

TEST(WorkspaceRunInputs, TheProjectsHostsElseOnline) {
  const auto hosts = prepared(config("allow:\n  - github.com\n"), {});
  EXPECT_EQ(hosts.options.allow, std::vector<std::string>{"github.com"});
  EXPECT_FALSE(hosts.options.online);
  EXPECT_EQ(project_network(config("allow:\n  - github.com\n")), policy::NetworkMode::allowlist);

  const auto open = prepared(config(""), {});
  EXPECT_TRUE(open.options.online);
  EXPECT_TRUE(open.options.allow.empty());
  EXPECT_EQ(project_network(config("")), policy::NetworkMode::online);
  EXPECT_EQ(open.kind, run::RunKind::workspace);
}

TEST(WorkspaceRunInputs, TheFlagsWinAndAnAgentKeepsItsOwnRules) {
  WorkspacedRunRequest offline;
  offline.options.offline = true;
  const auto flags = prepared(config("allow:\n  - github.com\n"), offline);
  EXPECT_TRUE(flags.options.offline);
  EXPECT_TRUE(flags.options.allow.empty());

  WorkspacedRunRequest agent;
  agent.agent = "bot";
  const auto as_agent = prepared(config("allow:\n  - github.com\n"), agent);
  EXPECT_TRUE(as_agent.options.allow.empty());
  EXPECT_FALSE(as_agent.options.online);
  EXPECT_EQ(as_agent.agent, "bot");
}

TEST(WorkspaceRunInputs, TheProjectsConfigMayTurnTheSealOffAndSaysWhere) {
  const auto off = prepared(config("profile: developer\nsandbox_workspaces: false\n"), {});
  EXPECT_TRUE(off.options.unsealed);
  EXPECT_EQ(off.unsealed_because, "sandbox_workspaces is false in /repo/.parallex/config.yaml:2");
  EXPECT_EQ(off.options.profile, std::optional<std::string>("developer"));

  WorkspacedRunRequest named;
  named.options.profile = "offline";
  EXPECT_EQ(prepared(config("profile: developer\n"), named).options.profile,
            std::optional<std::string>("offline"));
}

TEST(WorkspaceRunInputs, ABadProfileIsRefusedBeforeAnythingIsMade) {
  WorkspacedRunRequest bad;
  bad.options.profile = "no-such-profile";
  bad.command = {"true"};
  const auto in = prepare_inputs(project(), config(""), bad);
  ASSERT_FALSE(in);
  EXPECT_NE(in.error().message.find("no-such-profile"), std::string::npos) << in.error().message;
}

}  // namespace
}  // namespace px::workspace
