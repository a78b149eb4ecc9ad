#pragma once
// Shared by `parallex harness -w` (cmd_workspace_harness.cpp) and `parallex workspace
// agent` (cmd_workspace.cpp): a fresh workspace, then the command sealed to it.
// Implemented in cmd_workspace_run.cpp.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace px::cli::workspace_cmd {

struct WorkspacedRun {
  std::optional<std::string> name;     // --name (default: a fresh ws-XXXX)
  std::optional<std::string> from;     // --from REF
  std::optional<std::string> harness;  // --harness PLUGIN
  bool offline = false;                // --offline
  std::string events;                  // --events FILE|fd:N
  std::string agent;                   // `workspace agent NAME`: run as this agent
  std::vector<std::string> command;    // after --
};

// Declares --name, --from, --harness, --offline, --events and the command.
void add_workspaced_run_options(CLI::App& app, WorkspacedRun& options);

// Returns the command's exit status, or the status for an error before it ran.
int run_workspaced(const WorkspacedRun& options);

}  // namespace px::cli::workspace_cmd
