#pragma once
// The project a workspace belongs to: the repository found from a folder (any
// subdirectory, a submodule, or one of its worktrees, a Parallex workspace
// included), reduced to its main working tree and its git dir.
#include <filesystem>

#include "common/error.hpp"

namespace px::workspace {

namespace fs = std::filesystem;

struct Project {
  fs::path root;        // the main working tree, canonical
  fs::path common_dir;  // the git dir shared by all its worktrees, canonical

  fs::path parallex_dir() const { return root / ".parallex"; }
  fs::path workspaces_dir() const { return root / ".parallex" / "workspaces"; }
  fs::path config_file() const { return root / ".parallex" / "config.yaml"; }
  fs::path token_file() const { return root / ".parallex" / "github-token"; }
  // Our own bookkeeping (what each workspace was made from), outside any worktree.
  fs::path state_dir() const { return root / ".parallex" / "state"; }
};

// Finds the repository that contains `start`. Errors: not inside a repository,
// a bare repository (no working tree to copy), a missing folder.
Result<Project> find_project(const fs::path& start);

// Whether `file` (inside the project's working tree) is in git's index or its
// HEAD: written by whoever can commit to the repository, not only by you.
bool tracked_by_git(const Project& project, const fs::path& file);

}  // namespace px::workspace
