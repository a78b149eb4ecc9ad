#include "agents/repo.hpp"

#include <git2.h>

#include <memory>

#include "common/ascii.hpp"
#include "common/libgit2.hpp"

namespace px::agents {

namespace {

std::string last_git_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

using RepoPtr = std::unique_ptr<git_repository, void (*)(git_repository*)>;

// Opens the repository holding `dir`; nullptr (no error) when there is none.
Result<RepoPtr> open_repo(const fs::path& dir) {
  libgit2_init();
  git_repository* raw = nullptr;
  const int rc = git_repository_open_ext(&raw, dir.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND) return RepoPtr(nullptr, git_repository_free);
  if (rc < 0) return Error::io("open the git repository at " + dir.string() + ": " + last_git_error(), 0);
  return RepoPtr(raw, git_repository_free);
}

std::string oid_hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

}  // namespace

bool url_holds_credentials(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return false;
  const auto start = scheme + 3;
  const auto end = url.find_first_of("/?#", start);
  const std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const auto at = authority.rfind('@');
  if (at == std::string::npos) return false;
  const std::string userinfo = authority.substr(0, at);
  if (userinfo.find(':') != std::string::npos) return true;  // user:password
  for (const char* prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"})
    if (userinfo.rfind(prefix, 0) == 0) return true;
  return userinfo.size() >= 32;  // a bare token as the user name
}

Result<std::optional<nlohmann::json>> repository_refs(const fs::path& dir) {
  PX_TRY_ASSIGN(auto repo, open_repo(dir));
  if (!repo) return std::optional<nlohmann::json>{};
  nlohmann::json out;
  const char* workdir = git_repository_workdir(repo.get());
  out["repository"] = workdir ? workdir : git_repository_path(repo.get());
  nlohmann::json refs = nlohmann::json::object();
  git_strarray names{};
  if (git_reference_list(&names, repo.get()) < 0)
    return Error::io("list the refs of " + out["repository"].get<std::string>() + ": " + last_git_error(), 0);
  for (std::size_t i = 0; i < names.count; ++i) {
    git_oid oid;
    if (git_reference_name_to_id(&oid, repo.get(), names.strings[i]) == 0)
      refs[names.strings[i]] = oid_hex(&oid);
  }
  git_strarray_dispose(&names);
  out["refs"] = std::move(refs);
  git_reference* head = nullptr;
  if (git_reference_lookup(&head, repo.get(), "HEAD") == 0) {
    if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
      out["head"] = git_reference_symbolic_target(head);
    else if (const git_oid* oid = git_reference_target(head))
      out["head"] = oid_hex(oid);
    git_reference_free(head);
  }
  git_oid head_oid;
  if (git_reference_name_to_id(&head_oid, repo.get(), "HEAD") == 0) out["head_commit"] = oid_hex(&head_oid);
  return std::optional<nlohmann::json>{std::move(out)};
}

Result<std::vector<std::string>> config_keys_with_tokens(const fs::path& dir) {
  std::vector<std::string> keys;
  PX_TRY_ASSIGN(auto repo, open_repo(dir));
  if (!repo) return keys;
  git_config* all = nullptr;
  if (git_repository_config_snapshot(&all, repo.get()) < 0)
    return Error::io("read the git config of " + dir.string() + ": " + last_git_error(), 0);
  std::unique_ptr<git_config, decltype(&git_config_free)> all_ptr(all, git_config_free);
  git_config* local = nullptr;
  if (git_config_open_level(&local, all, GIT_CONFIG_LEVEL_LOCAL) < 0) return keys;  // no local config
  std::unique_ptr<git_config, decltype(&git_config_free)> local_ptr(local, git_config_free);
  git_config_iterator* it = nullptr;
  if (git_config_iterator_new(&it, local) < 0) return keys;
  git_config_entry* entry = nullptr;
  while (git_config_next(&entry, it) == 0) {
    if (entry->value && url_holds_credentials(entry->value)) keys.emplace_back(entry->name);
    // A plain extraheader with a bearer or basic token is as much a credential.
    const std::string name = entry->name;
    if (entry->value && name.size() > 12 && name.ends_with(".extraheader")) {
      const std::string v = ascii_lower(entry->value);
      if (v.find("authorization:") != std::string::npos) keys.push_back(name);
    }
  }
  git_config_iterator_free(it);
  return keys;
}

}  // namespace px::agents
