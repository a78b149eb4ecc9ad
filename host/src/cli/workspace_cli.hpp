#pragma once
// Shared by `parallex harness -w` (cmd_workspace_harness.cpp), `parallex agent
// -w` and `parallex workspace agent` (cmd_workspace.cpp): a fresh workspace,
// then the command sealed to it through the run stage, with the inputs
// workspace/run_inputs decides. Implemented in cmd_workspace_run.cpp.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run/options.hpp"

namespace px::cli::workspace_cmd {

struct WorkspacedRun {
  std::optional<std::string> name;   // --name (default: a fresh ws-XXXX)
  std::optional<std::string> from;   // --from REF
  std::string events;                // --events FILE|fd:N
  std::string agent;                 // run as this agent
  run::RunOptions options;           // the run options every run command takes (no --in: the workspace is it)
  std::vector<std::string> command;  // after --
};

// Declares --name, --from, --events, the run options and the command.
void add_workspaced_run_options(CLI::App& app, WorkspacedRun& options);

// Returns the command's exit status, or 125 when nothing ran.
int run_workspaced(const WorkspacedRun& options);

}  // namespace px::cli::workspace_cmd
