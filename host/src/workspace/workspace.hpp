#pragma once
// Disposable workspaces: a git worktree of the project on a branch of its own
// (parallex/NAME) in <project>/.parallex/workspaces/NAME. Made, listed and
// removed with libgit2; a failed `new` rolls back to nothing, and `rm` refuses
// to lose work unless forced, saying exactly what would be lost.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workspace/project.hpp"

namespace px::workspace {

struct WorkspaceInfo {
  std::string name;
  std::string branch;       // "parallex/NAME"
  fs::path path;            // the worktree
  fs::path git_dir;         // <common_dir>/worktrees/NAME (what the worktree's .git file names)
  std::string base;         // what it was made from: a full ref name, or a commit id
  std::string base_commit;  // the commit it started at
  std::string head_commit;  // the branch's tip now ("" when the branch is gone)
  bool folder_missing = false;
  bool dirty = false;
  std::vector<std::string> changes;          // "M  path", "?? path" (as git status --short)
  std::optional<std::size_t> ahead, behind;  // against the base's current commit
  std::optional<std::string> locked;         // the lock reason

  nlohmann::json to_json() const;
};

// Names are folder names and branch components: letters, digits, '.', '_', '-',
// starting with a letter or digit, at most 64 characters.
Status check_workspace_name(const std::string& name);
std::string branch_for(const std::string& name);

// Adds "/.parallex/" to the repository's info/exclude (not the user's
// .gitignore) when it is not there yet, so workspaces and the token file are
// never committed.
Status ensure_excluded(const Project& project);

struct NewOptions {
  std::optional<std::string> name;  // default: a fresh "ws-XXXX"
  std::optional<std::string> from;  // a branch, tag or commit; default: the current branch
};
Result<WorkspaceInfo> create_workspace(const Project& project, const NewOptions& options);

Result<std::vector<WorkspaceInfo>> list_workspaces(const Project& project);
Result<WorkspaceInfo> find_workspace(const Project& project, const std::string& name);

struct Removal {
  std::vector<std::string> discarded;  // what --force threw away, for the user
};
Result<Removal> remove_workspace(const Project& project, const std::string& name, bool force);

// The workspace's uncommitted changes, as `git status --short` lines.
Result<std::vector<std::string>> workspace_changes(const fs::path& worktree);

}  // namespace px::workspace
