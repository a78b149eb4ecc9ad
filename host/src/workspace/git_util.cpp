#include "workspace/git_util.hpp"

#include "common/libgit2.hpp"

namespace px::workspace::git {

Error error(const std::string& what, ErrorKind kind) {
  const git_error* e = git_error_last();
  std::string detail = e && e->message ? e->message : "unknown libgit2 error";
  return Error{kind, what + ": " + detail};
}

Result<Repo> open(const std::string& path) {
  libgit2_init();
  git_repository* repo = nullptr;
  if (git_repository_open_ext(&repo, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0)
    return error("cannot open the git repository " + path);
  return Repo(repo);
}

std::string oid_hex(const git_oid& oid, std::size_t length) {
  char buf[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(buf, sizeof buf, &oid);
  return std::string(buf).substr(0, length);
}

}  // namespace px::workspace::git
