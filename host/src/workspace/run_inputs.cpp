#include "workspace/run_inputs.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <map>

#include "common/paths.hpp"
#include "workspace/github_token.hpp"
#include "workspace/sealed_git.hpp"

namespace px::workspace {

namespace {

// Inside the seal the run's temp dir is mounted at /tmp.
constexpr const char* kGhConfigInside = "/tmp/parallex-gh";

}  // namespace

Result<run::RunInputs> prepare_inputs(const Project& project, const ProjectConfig& config,
                                      const WorkspacedRunRequest& request) {
  run::RunInputs inputs;
  inputs.kind = run::RunKind::workspace;
  inputs.options = request.options;
  inputs.agent = request.agent;
  inputs.command = request.command;
  if (!config.sandbox_workspaces) {
    inputs.options.unsealed = true;
    inputs.unsealed_because = "sandbox_workspaces is false in " + project.config_file().string() + ":" +
                              std::to_string(config.sandbox_workspaces_line);
  }
  PX_TRY(run::check_seal(inputs.options));
  const run::RunOptions& given = request.options;
  if (!given.offline && !given.online && given.allow.empty() && request.agent.empty()) {
    if (project_network(config) == policy::NetworkMode::allowlist)
      inputs.options.allow = config.allow;
    else
      inputs.options.online = true;
  }
  if (!given.profile && config.profile) inputs.options.profile = config.profile;
  PX_TRY(run::check_options(inputs.options));
  return inputs;
}

Status add_workspace(run::RunInputs& inputs, const Project& project, const WorkspaceInfo& workspace,
                     const std::optional<std::string>& github_token) {
  PX_TRY_ASSIGN(const auto git_paths, sealed_git_paths(project, workspace));
  const bool sealed = !inputs.options.unsealed;

  std::map<std::string, std::string> env;
  env["PARALLEX_WORKSPACE"] = workspace.name;
  const char* path_env = std::getenv("PATH");
  if (const auto node = find_executable("node", path_env ? path_env : ""))
    env["PARALLEX_NODE"] = fs::absolute(*node).lexically_normal().string();
  if (inputs.agent.empty()) {
    // gh reads hosts.yml from its config dir on every call: an empty private
    // one, so it sees the scoped token or nothing (never the user's hosts.yml).
    env["GH_CONFIG_DIR"] = kGhConfigInside;
    if (!sealed) {
      // Unsealed, /tmp is the host's: a private dir of the workspace's own instead.
      const fs::path gh = parallex_runtime_dir() / "workspace-gh" / workspace.name;
      std::error_code ec;
      fs::create_directories(gh, ec);
      ::chmod(gh.c_str(), 0700);
      env["GH_CONFIG_DIR"] = gh.string();
    }
    env["GIT_TERMINAL_PROMPT"] = "0";  // without a token, push fails at once instead of asking
    if (github_token) {
      // The one variable of the strip list that comes back, brokered: the run
      // gets a placeholder of the token's shape in GH_TOKEN, and the proxy
      // swaps the token in on GitHub's hosts only.
      inputs.held_credentials.push_back({brokered_github_token(project.token_file()), *github_token});
      // git push over HTTPS with that token alone (the helper reads the
      // variable; the token itself is not written in any config), and GitHub
      // SSH remotes turned to HTTPS, since ~/.ssh and SSH_AUTH_SOCK are gone.
      env["GIT_CONFIG_COUNT"] = "3";
      env["GIT_CONFIG_KEY_0"] = "credential.https://github.com.helper";
      env["GIT_CONFIG_VALUE_0"] =
          "!f() { test \"$1\" = get && echo username=x-access-token && echo \"password=$GH_TOKEN\"; }; f";
      env["GIT_CONFIG_KEY_1"] = "url.https://github.com/.insteadOf";
      env["GIT_CONFIG_VALUE_1"] = "git@github.com:";
      env["GIT_CONFIG_KEY_2"] = "url.https://github.com/.pushInsteadOf";
      env["GIT_CONFIG_VALUE_2"] = "ssh://git@github.com/";
    }
  }
  inputs.options.in = workspace.path.string();
  // Parallex's own variables (PARALLEX_*: only Parallex sets them) go to the
  // run as the front door's; the rest are rules of the workspace's profile.
  std::map<std::string, std::string> rules;
  for (const auto& [name, value] : env)
    (name.rfind("PARALLEX_", 0) == 0 ? inputs.extra_env : rules)[name] = value;
  inputs.extra_profiles.push_back(workspace_profile(workspace, git_paths, rules));
  inputs.cwd = workspace.path;
  inputs.record.workspace = run::WorkspaceRef{workspace.name,        workspace.branch, workspace.base,
                                              workspace.base_commit, workspace.path,   project.root};
  inputs.on_finish = [path = workspace.path](run::RunRecord& record) {
    if (auto changes = workspace_changes(path)) record.changed_files = std::move(changes).value();
  };
  return ok();
}

}  // namespace px::workspace
