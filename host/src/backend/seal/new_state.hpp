#pragma once
// What a run wrote into harness state dirs that did not exist before it (the
// "fresh" binds of mounts::ViewPlan). Before the run nothing is made in the
// user's tree; after it, what the command wrote there is copied to the path
// the policy granted, as if the harness had run unsealed. An empty backing dir
// leaves no trace.
#include <filesystem>
#include <string>
#include <vector>

#include "policy/home_files.hpp"

namespace px::seal {

namespace fs = std::filesystem;

struct NewStateDir {
  fs::path target;   // the granted path, as the user knows it (~/.claude/projects)
  fs::path backing;  // the run's own dir the view showed there
};

// Copies each non-empty backing dir to its target: missing parents are made
// 0700, nothing is followed through a link, nothing existing is overwritten
// (an entry that exists by then is left alone and counted). Returns one line
// per target that received something, for the run's notices.
std::vector<std::string> keep_new_state(const std::vector<NewStateDir>& dirs);

// Before keep_new_state: moves out of each backing dir what the run made at a
// guarded path of the harness's (policy::HomeFile::guarded: a setting, or a
// data file with keys that run commands) into `held_dir`, at its absolute
// path beneath it (~/.codex/config.toml -> held_dir/home/me/.codex/config.toml):
// the supervisor settles it. A guarded path inside another moves with it.
// Returns a line for each that could not be moved (then it is removed: a
// setting is never kept unseen).
std::vector<std::string> hold_guarded_new_state(const std::vector<NewStateDir>& dirs,
                                                const std::vector<policy::HomeFile>& home_files,
                                                const fs::path& held_dir);

}  // namespace px::seal
