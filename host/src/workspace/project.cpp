#include "workspace/project.hpp"

#include "common/libgit2.hpp"
#include "workspace/git_util.hpp"

namespace px::workspace {

namespace {

fs::path canonical_dir(const char* path) {
  std::error_code ec;
  fs::path p = fs::canonical(fs::path(path), ec);
  return ec ? fs::path(path).lexically_normal() : p;
}

}  // namespace

Result<Project> find_project(const fs::path& start) {
  std::error_code ec;
  if (!fs::is_directory(start, ec))
    return Error::not_found(start.string() + " is not a folder; run this inside your project's repository");
  libgit2_init();
  git_repository* found = nullptr;
  if (git_repository_open_ext(&found, start.c_str(), 0, nullptr) != 0) {
    if (git_error_last() && git_error_last()->klass == GIT_ERROR_REPOSITORY) git_error_clear();
    return Error::not_found(start.string() +
                            " is not inside a git repository; run this in your project's folder (a clone "
                            "with a working tree), or make it one with `git init`");
  }
  git::Repo repo(found);
  if (git_repository_is_bare(repo.get()))
    return Error::invalid(canonical_dir(git_repository_path(repo.get())).string() +
                          " is a bare repository, which has no working tree to copy; run this in a clone "
                          "with a working tree (git clone " +
                          canonical_dir(git_repository_path(repo.get())).string() + " DIR)");
  Project project;
  if (git_repository_is_worktree(repo.get())) {
    // A linked worktree (maybe one of our workspaces): the project is the main one.
    const fs::path common = canonical_dir(git_repository_commondir(repo.get()));
    PX_TRY_ASSIGN(auto main, git::open(common.string()));
    const char* workdir = git_repository_workdir(main.get());
    if (!workdir || git_repository_is_bare(main.get()))
      return Error::invalid(start.string() + " is a worktree of the bare repository " + common.string() +
                            ", which has no main working tree to keep workspaces in; run this in a clone "
                            "with a working tree");
    project.root = canonical_dir(workdir);
    project.common_dir = common;
  } else {
    const char* workdir = git_repository_workdir(repo.get());
    if (!workdir) return Error::invalid(start.string() + " has no working tree; run this in a normal clone");
    project.root = canonical_dir(workdir);
    project.common_dir = canonical_dir(git_repository_commondir(repo.get()));
  }
  return project;
}

bool tracked_by_git(const Project& project, const fs::path& file) {
  auto repo = git::open(project.root.string());
  if (!repo) return false;
  const fs::path relative = file.lexically_relative(project.root);
  if (relative.empty() || *relative.begin() == "..") return false;
  unsigned int flags = 0;
  if (git_status_file(&flags, repo.value().get(), relative.generic_string().c_str()) != 0) {
    git_error_clear();
    return false;  // in neither the index nor HEAD (or no such file)
  }
  return (flags & (GIT_STATUS_WT_NEW | GIT_STATUS_IGNORED)) == 0;
}

}  // namespace px::workspace
