#pragma once
// What every command that starts a run needs: the host environment, the run's
// private temp dir, and where ad-hoc runs keep their records.
#include <filesystem>
#include <map>
#include <string>

#include "common/error.hpp"

namespace px::cli {

std::map<std::string, std::string> host_environment();
// A new private temp dir for one run, mode 0700, under the user's runtime dir.
Result<std::filesystem::path> make_run_temp();
// Records of ad-hoc runs (not an agent's): <state>/runs (<data>/runs before).
std::filesystem::path adhoc_runs_dir();
// Whether a live run (its supervisor answering) is running as agent `name`.
bool agent_is_running(const std::string& name);

}  // namespace px::cli
