#include "workspace/sealed_git.hpp"

namespace px::workspace {

Result<std::vector<GitPath>> sealed_git_paths(const Project& p, const WorkspaceInfo& w) {
  const fs::path common = p.common_dir;
  const fs::path heads = common / "refs" / "heads" / "parallex";
  const fs::path logs = common / "logs" / "refs" / "heads" / "parallex";
  std::error_code ec;
  for (const auto& dir : {heads, logs}) {
    fs::create_directories(dir, ec);
    if (ec) return Error::io("cannot create " + dir.string() + " for the workspace's branch", ec.value());
  }
  std::vector<GitPath> out{
      {common, GitPath::Kind::read,
       "the repository's shared git state (objects, refs, config), for git in the workspace"},
      {w.git_dir, GitPath::Kind::write, "the workspace's own git state (HEAD, index, reflog)"},
      {common / "objects", GitPath::Kind::write, "git writes new commits, trees and blobs here"},
      {heads, GitPath::Kind::write,
       "the workspace's branch " + w.branch + " (git renames a lock file over it)"},
      {logs, GitPath::Kind::write, "the reflog of " + w.branch},
  };
  for (const char* file : {"commondir", "gitdir", "config.worktree"}) {
    if (!fs::exists(w.git_dir / file, ec)) continue;
    out.push_back({w.git_dir / file, GitPath::Kind::read_only,
                   std::string(file) + " says where git looks and what it runs: never written by a run"});
  }
  return out;
}

policy::Profile workspace_profile(const WorkspaceInfo& w, const std::vector<GitPath>& git_paths,
                                  const std::map<std::string, std::string>& env) {
  policy::Profile profile;
  profile.name = "workspace " + w.name;
  profile.description = "the git paths and variables of a workspaced run";
  for (const auto& g : git_paths) {
    policy::ProfileEntry e{g.path.string(), g.reason, 0};
    switch (g.kind) {
      case GitPath::Kind::read:
        profile.read.push_back(std::move(e));
        break;
      case GitPath::Kind::write:
        profile.write.push_back(std::move(e));
        break;
      case GitPath::Kind::read_only:
        profile.read_only.push_back(std::move(e));
        break;
    }
  }
  for (const auto& [name, value] : env) profile.env_set.push_back({name, value, 0});
  return profile;
}

}  // namespace px::workspace
