#pragma once
// The JSON API of `parallex ui` (docs/ui.md): each area's routes, each one
// calling the function its command calls, so the page and `--json` share one
// JSON and one set of checks.
#include <string>
#include <vector>

#include "ui/rules.hpp"

namespace px::ui {

// Runs: list, one run, pause/resume/kill (ui/api_runs.cpp).
std::vector<ApiRoute> api_runs_routes();
// Questions of ask mode and live rule changes (ui/api_decisions.cpp).
std::vector<ApiRoute> api_decisions_routes();
// Agents: list, show, grants and hosts (ui/api_agents.cpp).
std::vector<ApiRoute> api_agents_routes();
// One run and its report (ui/api_run_report.cpp).
std::vector<ApiRoute> api_run_report_routes();
// `error` of an action on live run `id`, or 410 saying how the run ended
// when it is no longer live; `what`: the action ("pause", "allow a host in").
ApiAnswer run_gone_or(const Error& error, const std::string& id, const std::string& what);
// Every route, for the server.
std::vector<ApiRoute> api_routes();

}  // namespace px::ui
