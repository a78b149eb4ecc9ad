#pragma once
// What a sealed run of a workspace needs from the main repository so git works
// inside it. A worktree's `.git` is a file naming <common>/worktrees/NAME; the
// objects, refs and config live in the common dir, outside the run folder. The
// seal opens exactly this, as a profile composed after the user's:
//
//   read        <common>                       refs, packed-refs, config, info/ (all of git's shared state)
//   write       <common>/worktrees/NAME        the workspace's HEAD, index, logs (per-worktree state)
//   write       <common>/objects               new commits, trees and blobs
//   write       <common>/refs/heads/parallex   the branch parallex/NAME: git writes NAME.lock there and
//   renames it write       <common>/logs/refs/heads/parallex   the branch's reflog, likewise read-only
//   <common>/worktrees/NAME/{commondir,gitdir,config.worktree}
//               commondir and gitdir say where git looks: rewritten, they could
//               point your own git (outside the seal) at a config the run wrote;
//               config.worktree can set core.fsmonitor and hooksPath.
//
// Everything else of the common dir (config, hooks, other branches, tags,
// remote branches, other worktrees' state) stays read-only.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/profile.hpp"
#include "workspace/project.hpp"
#include "workspace/workspace.hpp"

namespace px::workspace {

struct GitPath {
  fs::path path;
  enum class Kind { read, write, read_only } kind = Kind::read;
  std::string reason;
};

// Makes the ref and reflog folders when missing (so they can be granted) and
// returns the paths above.
Result<std::vector<GitPath>> sealed_git_paths(const Project& project, const WorkspaceInfo& workspace);

// The profile a workspaced run adds over the default one (and the project's):
// the git paths, and the variables set for the run. Its name shows as the
// origin of each entry in `policy show` and the run record.
policy::Profile workspace_profile(const WorkspaceInfo& workspace, const std::vector<GitPath>& git_paths,
                                  const std::map<std::string, std::string>& env);

}  // namespace px::workspace
