#include "report/git_commits.hpp"

#include <git2.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <set>

#include "common/libgit2.hpp"
#include "common/paths.hpp"
#include "common/spawn.hpp"
#include "common/temp_dir.hpp"
#include "report/time_text.hpp"

namespace px::report {

namespace fs = std::filesystem;

namespace {

template <class T, void (*Free)(T*)>
struct GitFree {
  void operator()(T* p) const { Free(p); }
};
using RepoPtr = std::unique_ptr<git_repository, GitFree<git_repository, git_repository_free>>;
using WalkPtr = std::unique_ptr<git_revwalk, GitFree<git_revwalk, git_revwalk_free>>;
using CommitPtr = std::unique_ptr<git_commit, GitFree<git_commit, git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, GitFree<git_tree, git_tree_free>>;
using DiffPtr = std::unique_ptr<git_diff, GitFree<git_diff, git_diff_free>>;

std::string last_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

std::string hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

Json person(const git_signature* s) {
  if (!s) return nullptr;
  return Json{{"name", s->name ? s->name : ""},
              {"email", s->email ? s->email : ""},
              {"time", format_iso_ms(static_cast<std::int64_t>(s->when.time) * 1000)}};
}

bool write_file(const fs::path& p, const char* data, std::size_t size) {
  std::ofstream out(p, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// ssh-keygen -Y find-principals, then -Y verify with the principal found, as git does.
Json verify_ssh(const std::string& signature, const std::string& payload, const fs::path& allowed) {
  Json out{{"status", "signed, unverified"}, {"format", "ssh"}, {"signer", ""}, {"detail", ""}};
  const auto keygen = find_executable("ssh-keygen", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
  if (!keygen) {
    out["detail"] = "ssh-keygen is not installed, so the signature was not checked.";
    return out;
  }
  // The signature files in a private folder, removed on scope exit.
  auto made = TempDir::make("parallex-sig-");
  const fs::path dir = made ? made.value().path() : fs::path();
  if (dir.empty() || !write_file(dir / "sig", signature.data(), signature.size()) ||
      !write_file(dir / "payload", payload.data(), payload.size())) {
    out["detail"] = "The signature could not be written to a temporary file to check it.";
    return out;
  }
  // ssh-keygen's messages go with its output, to be quoted when it fails.
  const CaptureLimits merged{.merge_stderr = true};
  auto found = spawn_capture({.argv = {keygen->string(), "-Y", "find-principals", "-f", allowed.string(),
                                       "-s", (dir / "sig").string()}},
                             merged);
  if (!found || found.value().exit_status != 0) {
    out["status"] = "bad";
    out["detail"] =
        "Signed by a key that is not among the agent's allowed signers (" + allowed.string() + ").";
    return out;
  }
  const std::string principal = first_line(found.value().out);
  auto verified = spawn_capture({.argv = {keygen->string(), "-Y", "verify", "-f", allowed.string(), "-I",
                                          principal, "-n", "git", "-s", (dir / "sig").string()},
                                 .stdin_file = dir / "payload"},
                                merged);
  out["signer"] = principal;
  if (verified && verified.value().exit_status == 0) {
    out["status"] = "verified";
    out["detail"] = "Good signature by " + principal + ", checked against " + allowed.string() + ".";
  } else {
    out["status"] = "bad";
    out["detail"] = "The signature does not verify against " + allowed.string() + ": " +
                    (verified ? first_line(verified.value().out) : verified.error().message);
  }
  return out;
}

Json signature_of(git_repository* repo, const git_oid* oid, const std::optional<fs::path>& allowed) {
  git_buf sig = GIT_BUF_INIT, data = GIT_BUF_INIT;
  const int rc = git_commit_extract_signature(&sig, &data, repo, const_cast<git_oid*>(oid), nullptr);
  if (rc == GIT_ENOTFOUND)
    return Json{{"status", "unsigned"}, {"format", ""}, {"signer", ""}, {"detail", ""}};
  if (rc != 0)
    return Json{{"status", "signed, unverified"}, {"format", ""}, {"signer", ""}, {"detail", last_error()}};
  const std::string signature(sig.ptr, sig.size), payload(data.ptr, data.size);
  git_buf_dispose(&sig);
  git_buf_dispose(&data);
  const bool ssh = signature.starts_with("-----BEGIN SSH SIGNATURE-----");
  if (!ssh) {
    const std::string format = signature.find("BEGIN PGP") != std::string::npos ? "openpgp" : "x509";
    return Json{{"status", "signed, unverified"},
                {"format", format},
                {"signer", ""},
                {"detail", "Only SSH signatures are checked (against the agent's allowed signers)."}};
  }
  std::error_code ec;
  if (!allowed || !fs::exists(*allowed, ec))
    return Json{{"status", "signed, unverified"},
                {"format", "ssh"},
                {"signer", ""},
                {"detail", "No allowed signers file to check it against."}};
  return verify_ssh(signature, payload, *allowed);
}

const char* delta_status(git_delta_t s) {
  switch (s) {
    case GIT_DELTA_ADDED:
      return "added";
    case GIT_DELTA_DELETED:
      return "deleted";
    case GIT_DELTA_RENAMED:
      return "renamed";
    case GIT_DELTA_COPIED:
      return "copied";
    case GIT_DELTA_TYPECHANGE:
      return "type changed";
    default:
      return "modified";
  }
}

Json files_of(git_repository* repo, git_commit* commit) {
  Json files = Json::array();
  git_tree* tree_raw = nullptr;
  if (git_commit_tree(&tree_raw, commit) != 0) return files;
  TreePtr tree(tree_raw);
  TreePtr parent_tree;
  if (git_commit_parentcount(commit) > 0) {
    git_commit* parent_raw = nullptr;
    if (git_commit_parent(&parent_raw, commit, 0) == 0) {
      CommitPtr parent(parent_raw);
      git_tree* pt = nullptr;
      if (git_commit_tree(&pt, parent.get()) == 0) parent_tree.reset(pt);
    }
  }
  git_diff* diff_raw = nullptr;
  if (git_diff_tree_to_tree(&diff_raw, repo, parent_tree.get(), tree.get(), nullptr) != 0) return files;
  DiffPtr diff(diff_raw);
  git_diff_find_options find;
  git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION);
  find.flags = GIT_DIFF_FIND_RENAMES;
  git_diff_find_similar(diff.get(), &find);
  const std::size_t n = git_diff_num_deltas(diff.get());
  for (std::size_t i = 0; i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
    Json f{{"path", d->new_file.path ? d->new_file.path : ""}, {"status", delta_status(d->status)}};
    if (d->status == GIT_DELTA_DELETED && d->old_file.path) f["path"] = d->old_file.path;
    if ((d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED) && d->old_file.path)
      f["from"] = d->old_file.path;
    files.push_back(std::move(f));
  }
  return files;
}

void push_oid_text(git_revwalk* walk, const std::string& text, bool hide) {
  git_oid oid;
  if (git_oid_fromstr(&oid, text.c_str()) != 0) return;
  // A ref to a tree or blob, or an object gone since, is not a commit to walk.
  if (hide)
    git_revwalk_hide(walk, &oid);
  else
    git_revwalk_push(walk, &oid);
  git_error_clear();
}

}  // namespace

Json commits_made(const CommitQuery& q, Source& source) {
  source.location = q.run_folder.string();
  Json commits = Json::array();
  if (q.run_folder.empty()) {
    source.status = "missing";
    source.message = "The run record names no run folder, so its commits cannot be found.";
    return commits;
  }
  libgit2_init();
  git_repository* repo_raw = nullptr;
  const int open_rc = git_repository_open_ext(&repo_raw, q.run_folder.c_str(), 0, nullptr);
  if (open_rc == GIT_ENOTFOUND) {
    source.status = "none";
    source.message = "The run folder " + q.run_folder.string() + " is not in a git repository.";
    return commits;
  }
  if (open_rc != 0) {
    source.status = "missing";
    source.message = "The repository at " + q.run_folder.string() + " cannot be opened: " + last_error();
    return commits;
  }
  RepoPtr repo(repo_raw);
  if (const char* wd = git_repository_workdir(repo.get())) source.location = wd;
  git_revwalk* walk_raw = nullptr;
  if (git_revwalk_new(&walk_raw, repo.get()) != 0) {
    source.status = "missing";
    source.message = "Cannot walk the history of " + source.location + ": " + last_error();
    return commits;
  }
  WalkPtr walk(walk_raw);
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME | GIT_SORT_REVERSE);
  if (q.refs_end.is_object() && !q.refs_end.empty()) {
    for (const auto& [name, oid] : q.refs_end.items())
      if (oid.is_string()) push_oid_text(walk.get(), oid.get<std::string>(), false);
  } else {
    git_strarray names{};
    if (git_reference_list(&names, repo.get()) == 0) {
      for (std::size_t i = 0; i < names.count; ++i) {
        git_oid oid;
        if (git_reference_name_to_id(&oid, repo.get(), names.strings[i]) == 0)
          push_oid_text(walk.get(), hex(&oid), false);
      }
      git_strarray_dispose(&names);
    }
    git_oid head;
    if (git_reference_name_to_id(&head, repo.get(), "HEAD") == 0)
      push_oid_text(walk.get(), hex(&head), false);
    git_error_clear();
  }
  const bool have_start = q.refs_start.is_object();
  // A run closed as lost has no refs at its end: what is reachable now may
  // have been committed after it, so its window's end bounds the walk.
  const bool have_end = q.refs_end.is_object() && !q.refs_end.empty();
  if (have_start) {
    for (const auto& [name, oid] : q.refs_start.items())
      if (oid.is_string()) push_oid_text(walk.get(), oid.get<std::string>(), true);
    if (!q.head_start.empty()) push_oid_text(walk.get(), q.head_start, true);
  } else {
    source.status = "partial";
    source.message =
        "The run record holds no refs at the start of the run (not an agent run, or the folder was not a "
        "repository then), so the commits listed are those committed during the run's time, which a commit "
        "date can fake.";
  }
  if (have_start && !have_end && q.until_ms) {
    source.status = "partial";
    source.message =
        "The run record holds no refs at the end of the run (its supervisor ended without finishing it), so "
        "the commits listed stop at its end time, which a commit date can fake.";
  }
  git_oid oid;
  std::size_t seen = 0;
  while (git_revwalk_next(&oid, walk.get()) == 0) {
    git_commit* c_raw = nullptr;
    if (git_commit_lookup(&c_raw, repo.get(), &oid) != 0) continue;
    CommitPtr commit(c_raw);
    const git_signature* committer = git_commit_committer(commit.get());
    if (!have_start || !have_end) {
      const std::int64_t t = committer ? static_cast<std::int64_t>(committer->when.time) * 1000 : 0;
      const std::int64_t slack = q.whole_seconds ? 0 : 1000;
      if (!have_start && q.since_ms && t < q.since_ms - slack) continue;
      if (q.until_ms && t + (q.whole_seconds ? 999 : 0) > q.until_ms + slack) continue;
    }
    if (++seen > q.limit) {
      source.status = "partial";
      source.message = "More than " + std::to_string(q.limit) + " commits; only the first are listed.";
      break;
    }
    const char* message = git_commit_message(commit.get());
    std::string msg = message ? message : "";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const std::string id = hex(&oid);
    commits.push_back(Json{{"id", id},
                           {"short_id", id.substr(0, 10)},
                           {"author", person(git_commit_author(commit.get()))},
                           {"committer", person(committer)},
                           {"summary", first_line(msg)},
                           {"message", msg},
                           {"signature", signature_of(repo.get(), &oid, q.allowed_signers)},
                           {"files", files_of(repo.get(), commit.get())}});
  }
  return commits;
}

}  // namespace px::report
