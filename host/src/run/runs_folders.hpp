#pragma once
// Every runs folder of this user: the ad-hoc runs' and each agent's, and
// where an older Parallex kept them (under the data folder), each once. For
// the commands that look at every run (`runs`, `events`) and `parallex ui`.
#include <filesystem>
#include <string>
#include <vector>

#include "report/run_events.hpp"

namespace px::run {

// Ad-hoc runs first, then each agent's (its agent named), each folder once
// (PARALLEX_HOME puts state and data together), absolute.
std::vector<report::RunsFolder> every_runs_folder();

}  // namespace px::run
