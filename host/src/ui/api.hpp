#pragma once
// The JSON API of `parallex ui` (docs/ui.md): each area's routes, each one
// calling the function its command calls, so the page and `--json` share one
// JSON and one set of checks.
#include <vector>

#include "ui/rules.hpp"

namespace px::ui {

// Runs: list, one run, pause/resume/kill (ui/api_runs.cpp).
std::vector<ApiRoute> api_runs_routes();
// Every route, for the server.
std::vector<ApiRoute> api_routes();

}  // namespace px::ui
