#pragma once
// The run folder's git files that can make git run a program, for the run
// stage: those that exist are read-only in the run (as .git/config and
// .git/hooks are, from the default profile), and what the run adds there is
// checked after it (protect/quarantine.hpp).
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace px::run {

namespace fs = std::filesystem;

// The existing ones beyond .git/config and .git/hooks: .git's commondir,
// config.worktree and info/attributes; every submodule git dir's config,
// hooks, commondir, config.worktree and attributes (modules of modules too);
// every worktree's commondir, config.worktree and gitdir (where the worktree
// is: `git worktree remove`, `prune` and `repair` act there); the config and hooks of a
// submodule whose git dir lies in its own folder.
std::vector<fs::path> existing_git_files(const fs::path& run_folder);

// With .git/config read-only, `git submodule update --init` cannot register a
// submodule there; the run's git gets what it would have written, for the
// run only, as git's own GIT_CONFIG_KEY_n/VALUE_n pairs: submodule.NAME.url
// (a relative URL resolved as git does) and submodule.NAME.active, for each
// submodule of .gitmodules that .git/config does not name.
std::vector<std::pair<std::string, std::string>> submodule_registrations(const fs::path& run_folder);

// Appends `entries` to the GIT_CONFIG_COUNT/KEY_n/VALUE_n variables of `env`.
void add_git_config_entries(std::map<std::string, std::string>& env,
                            const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace px::run
