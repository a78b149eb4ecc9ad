#pragma once
// What a run wrote into harness state dirs that did not exist before it (the
// "fresh" binds of mounts::ViewPlan). Before the run nothing is made in the
// user's tree; after it, what the command wrote there is copied to the path
// the policy granted, as if the harness had run unsealed. An empty backing dir
// leaves no trace.
#include <filesystem>
#include <string>
#include <vector>

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

}  // namespace px::seal
