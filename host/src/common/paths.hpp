#pragma once
// Where things live: the user's home, XDG dirs, and path helpers shared by the
// policy and the backends.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace px {

namespace fs = std::filesystem;

// $HOME, else the passwd entry of the real uid.
fs::path user_home();
// The home the user database gives this user, whatever $HOME says ("/" when it gives none).
fs::path account_home();
// Where things live (docs/packaging.md, `man parallex`). PARALLEX_HOME, when
// set, is all three: one folder for everything, for tests and throw-away set-ups.
// Agents, their homes and snapshots, user plugins: $XDG_DATA_HOME or ~/.local/share, then /parallex.
fs::path parallex_data_dir();
// Run records and logs: $XDG_STATE_HOME or ~/.local/state, then /parallex.
// (Records an older Parallex wrote under parallex_data_dir() are still read.)
fs::path parallex_state_dir();
// The run records of the agent whose folder is `agent_root`: for an agent of
// the default store (<data>/agents/NAME), <state>/agents/NAME/runs; for a
// store elsewhere (tests), <agent_root>/runs. <agent_root>/runs is where an
// older Parallex kept them all: still read, never written.
fs::path agent_runs_dir(const fs::path& agent_root);
// User profiles (profiles/NAME.yaml): $XDG_CONFIG_HOME or ~/.config, then /parallex.
fs::path parallex_config_dir();
// $XDG_RUNTIME_DIR/parallex, else /tmp/parallex-<uid> (created 0700 by callers).
fs::path parallex_runtime_dir();
// parallex_runtime_dir()/scratch: run folders Parallex makes for itself (the
// demo's, `check --sealed`'s), outside the home. The one part of its own state
// a run is not denied (policy/own_state.hpp), so a run can work there.
fs::path parallex_scratch_dir();

// Expands a leading "~" or "~/" against `home`; other paths are returned as is.
fs::path expand_home(const std::string& path, const fs::path& home);
// Absolute and lexically normal, without touching the filesystem.
fs::path normal_absolute(const fs::path& path);
// True when `path` is `root` or lies under it (lexically, on component bounds).
// Never when either holds a `..`: the text alone cannot say where that leads.
bool is_within(const fs::path& path, const fs::path& root);
// The absolute path of the running parallex executable (/proc/self/exe); "parallex" if unknown.
fs::path parallex_executable();
// This process's environment as a map (the input a run's policy filters).
std::map<std::string, std::string> process_environment();

// Resolves `name` against $PATH (or returns it if it has a slash and exists).
std::optional<fs::path> find_executable(const std::string& name, const std::string& path_env);

}  // namespace px
