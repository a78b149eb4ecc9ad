#pragma once
// The report command's options and action, for `parallex report` and for the
// `agent report NAME` alias (cmd_agents.cpp: add("report", ..., report_cmd::setup_report)).
#include "cli/command.hpp"

namespace px::cli::report_cmd {

// Declares NAME / --agent, --runs-dir, --home, --run | --last | --since, --json | --html
// on `app` and returns the action.
Action setup_report(CLI::App& app);

}  // namespace px::cli::report_cmd
