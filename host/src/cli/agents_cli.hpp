#pragma once
// Shared by the `parallex agent ...` command files (cmd_agents*.cpp).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

#include "agents/store.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "policy/compose.hpp"

namespace px::cli::agent_cmd {

namespace fs = std::filesystem;

// Each sub-command declares its options on `sub` and returns its action.
Action setup_github(CLI::App& sub);
Action setup_credential(CLI::App& sub);
Action setup_sign_in(CLI::App& sub);
Action setup_run(CLI::App& sub);

policy::Platform this_platform();
using px::cli::confirm;

}  // namespace px::cli::agent_cmd
