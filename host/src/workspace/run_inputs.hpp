#pragma once
// What a workspaced run (`harness -w`, `agent -w`, `workspace agent`) takes
// from the project and its workspace: the counterpart of agents/run_inputs for
// the run stage. The command line only shows it (events, messages); every
// decision about the run is here.
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "run/stage.hpp"
#include "workspace/config.hpp"
#include "workspace/project.hpp"
#include "workspace/workspace.hpp"

namespace px::workspace {

// The run as asked for, before a workspace exists.
struct WorkspacedRunRequest {
  run::RunOptions options;  // as the command line gave them
  std::string agent;        // run as this agent, or empty
  std::vector<std::string> command;
};

// Decides and checks everything that does not need the workspace, so a
// refusal makes nothing: the seal (off when the project's config says
// `sandbox_workspaces: false`, and why), the network (the flags win; an agent
// keeps its own rules; else project_network's hosts, or online), the profile.
Result<run::RunInputs> prepare_inputs(const Project& project, const ProjectConfig& config,
                                      const WorkspacedRunRequest& request);

// Adds what the fresh workspace brings: its folder as the run folder, its git
// paths and variables as one more profile, the project's GitHub token brokered
// (runs not as an agent), its record fields and the changed files at the end.
Status add_workspace(run::RunInputs& inputs, const Project& project, const WorkspaceInfo& workspace,
                     const std::optional<std::string>& github_token);

}  // namespace px::workspace
