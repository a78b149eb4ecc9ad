#pragma once
// libgit2 at the edge: owning handles and the last libgit2 error as an Error.
// Internal to px_workspace.
#include <git2.h>

#include <memory>
#include <string>

#include "common/error.hpp"

namespace px::workspace::git {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const {
    if (p) Free(p);
  }
};
using Repo = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using Ref = std::unique_ptr<git_reference, Deleter<git_reference, git_reference_free>>;
using Commit = std::unique_ptr<git_commit, Deleter<git_commit, git_commit_free>>;
using Object = std::unique_ptr<git_object, Deleter<git_object, git_object_free>>;
using Worktree = std::unique_ptr<git_worktree, Deleter<git_worktree, git_worktree_free>>;
using StatusList = std::unique_ptr<git_status_list, Deleter<git_status_list, git_status_list_free>>;
using Revwalk = std::unique_ptr<git_revwalk, Deleter<git_revwalk, git_revwalk_free>>;
using Config = std::unique_ptr<git_config, Deleter<git_config, git_config_free>>;

// "<what>: <libgit2's message>" as an Error of `kind`.
Error error(const std::string& what, ErrorKind kind = ErrorKind::io);

// Opens the repository at exactly `path` (no discovery).
Result<Repo> open(const std::string& path);

std::string oid_hex(const git_oid& oid, std::size_t length = 40);

}  // namespace px::workspace::git
