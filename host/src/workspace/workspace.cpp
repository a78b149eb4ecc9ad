#include "workspace/workspace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "common/beneath.hpp"
#include "common/clock.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/tree_copy.hpp"
#include "common/unique_fd.hpp"
#include "workspace/events.hpp"
#include "workspace/git_util.hpp"

namespace px::workspace {

namespace {

constexpr std::size_t kMaxListed = 20;  // lines of lost work shown per kind

fs::path state_file(const Project& p, const std::string& name) {
  return p.state_dir() / (name + ".json");
}

struct State {
  std::string base, base_commit;
};

State read_state(const Project& p, const std::string& name) {
  std::ifstream in(state_file(p, name));
  if (!in) return {};
  try {
    const auto j = nlohmann::json::parse(in);
    return {j.value("base", ""), j.value("base_commit", "")};
  } catch (const nlohmann::json::exception&) {
    return {};
  }
}

Status write_state(const Project& p, const WorkspaceInfo& w) {
  std::error_code ec;
  fs::create_directories(p.state_dir(), ec);
  if (ec) return Error::io("cannot create " + p.state_dir().string(), ec.value());
  std::ofstream out(state_file(p, w.name), std::ios::trunc);
  out << to_json_text(nlohmann::json{{"name", w.name},
                                     {"branch", w.branch},
                                     {"base", w.base},
                                     {"base_commit", w.base_commit},
                                     {"created_at", iso_utc_now()}},
                      2)
      << "\n";
  if (!out) return Error::io("cannot write " + state_file(p, w.name).string(), errno);
  return ok();
}

std::string random_name() {
  std::random_device rd;
  char buf[16];
  std::snprintf(buf, sizeof buf, "ws-%04x", static_cast<unsigned>(rd() & 0xffff));
  return buf;
}

bool exists_nofollow(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

// Removes `rel` beneath the folder `base` and everything in it, reaching it
// from a descriptor of `base` without following a link: a link at `rel` is
// removed itself, never what it names, and a link on the way refuses. What a
// run could write (a workspace, `.git/worktrees`) is removed this way, so a
// link it planted cannot turn a removal onto a folder of the user's.
// Nothing there: done.
Status remove_beneath(const fs::path& base, const fs::path& rel) {
  const fs::path shown = base / rel;
  UniqueFd root(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return errno == ENOENT ? ok() : Error::io("cannot open " + base.string(), errno);
  UniqueFd parent = open_beneath(root.get(), rel.parent_path(), O_RDONLY | O_DIRECTORY);
  if (!parent) {
    const int err = errno;
    if (err == ENOENT) return ok();
    if (err == ELOOP || err == EXDEV || err == ENOTDIR)
      return Error::invalid("cannot remove " + shown.string() + ": " + (base / rel.parent_path()).string() +
                            " is reached through a symbolic link or is not a folder (something replaced "
                            "what Parallex made). Nothing was removed; look at it and remove it yourself");
    return Error::io("cannot open " + (base / rel.parent_path()).string(), err);
  }
  const std::string name = rel.filename().string();
  struct stat st {};
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? ok() : Error::io("cannot look at " + shown.string(), errno);
  if (!remove_entry(parent.get(), name))
    return Error::io("cannot remove everything in " + shown.string() + " (what is left is still there)",
                     errno);
  return ok();
}

// Parallex makes a workspace at workspaces_dir()/NAME, and git records where
// (the worktree's `gitdir` file). A record naming any other folder was
// changed since (a run at the repository's root can write .git/worktrees),
// and is never taken as where the workspace is.
bool at_its_place(const fs::path& git_path, const Project& p, const std::string& name) {
  return normal_absolute(git_path) == normal_absolute(p.workspaces_dir() / name);
}

// Why a workspace name is taken, or "" when it is free.
std::string taken_because(git_repository* repo, const Project& p, const std::string& name) {
  git_worktree* wt = nullptr;
  if (git_worktree_lookup(&wt, repo, name.c_str()) == 0) {
    git::Worktree owned(wt);
    const fs::path path = git_worktree_path(wt);
    if (at_its_place(path, p, name))
      return "a workspace named '" + name + "' already exists at " + path.string() +
             "; pick another name, or remove it with `parallex workspace rm " + name + "`";
    return "the repository already has a worktree named '" + name + "' (at " + path.string() +
           ", see `git worktree list`); pick another name";
  }
  git_error_clear();
  if (exists_nofollow(p.common_dir / "worktrees" / name))
    return p.common_dir.string() + "/worktrees/" + name +
           " already exists (a stale worktree?); run `git worktree prune` or pick another name";
  git_reference* ref = nullptr;
  if (git_branch_lookup(&ref, repo, branch_for(name).c_str(), GIT_BRANCH_LOCAL) == 0) {
    git_reference_free(ref);
    return "the branch " + branch_for(name) +
           " already exists; pick another name, or delete the branch (git branch -D " + branch_for(name) +
           ") if it holds nothing you need";
  }
  git_error_clear();
  if (exists_nofollow(p.workspaces_dir() / name))
    return (p.workspaces_dir() / name).string() +
           " already exists; pick another name, or move that folder away";
  return {};
}

struct Base {
  std::string name;  // full ref name, or the commit id
  git_oid commit;
};

Result<Base> resolve_base(git_repository* repo, const Project& p, const std::optional<std::string>& from) {
  Base base{};
  if (from) {
    git_object* obj = nullptr;
    git_reference* ref = nullptr;
    if (from->empty() || git_revparse_ext(&obj, &ref, repo, from->c_str()) != 0)
      return git::error("--from " + *from + ": not a branch, tag or commit of " + p.root.string(),
                        ErrorKind::invalid_input);
    git::Object owned_obj(obj);
    git::Ref owned_ref(ref);
    git_object* peeled = nullptr;
    if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) != 0)
      return git::error("--from " + *from + ": does not name a commit", ErrorKind::invalid_input);
    base.commit = *git_object_id(peeled);
    git_object_free(peeled);
    base.name = ref ? git_reference_name(ref) : git::oid_hex(base.commit);
    return base;
  }
  if (git_repository_head_unborn(repo) == 1)
    return Error::invalid(p.root.string() +
                          " has no commits yet, so there is nothing to make a workspace from; commit first");
  git_reference* head = nullptr;
  if (git_repository_head(&head, repo) != 0) return git::error("cannot read HEAD of " + p.root.string());
  git::Ref owned(head);
  git_object* peeled = nullptr;
  if (git_reference_peel(&peeled, head, GIT_OBJECT_COMMIT) != 0)
    return git::error("HEAD does not name a commit");
  base.commit = *git_object_id(peeled);
  git_object_free(peeled);
  if (git_repository_head_detached(repo) == 1)
    // A detached HEAD has no branch to measure the workspace against later.
    return Error::invalid("HEAD of " + p.root.string() + " is detached (at " + git::oid_hex(base.commit, 7) +
                          "), so there is no branch to base the workspace on; give the start explicitly: "
                          "--from HEAD (this commit) or --from BRANCH");
  base.name = git_reference_name(head);
  return base;
}

void rollback(git_repository* repo, const Project& p, const std::string& name, bool made_branch,
              bool had_worktrees_dir) {
  (void)remove_beneath(p.root, fs::path(".parallex/workspaces") / name);
  (void)remove_beneath(p.common_dir, fs::path("worktrees") / name);
  if (!had_worktrees_dir)
    if (UniqueFd common(::open(p.common_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)); common)
      ::unlinkat(common.get(), "worktrees", AT_REMOVEDIR);  // only when empty
  (void)remove_beneath(p.root, fs::path(".parallex/state") / (name + ".json"));
  if (made_branch) {
    git_reference* ref = nullptr;
    if (git_branch_lookup(&ref, repo, branch_for(name).c_str(), GIT_BRANCH_LOCAL) == 0) {
      git_reference_delete(ref);  // see remove_workspace on git_branch_delete
      git_reference_free(ref);
    }
    // Its reflog and the empty parallex/ folders it leaves.
    (void)remove_beneath(p.common_dir, fs::path("logs/refs/heads/parallex") / name);
  }
  git_error_clear();
}

Result<std::vector<std::string>> status_lines(git_repository* repo) {
  git_status_options opts;
  git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* list = nullptr;
  if (git_status_list_new(&list, repo, &opts) != 0) return git::error("cannot read the status");
  git::StatusList owned(list);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < git_status_list_entrycount(list); ++i) {
    const git_status_entry* e = git_status_byindex(list, i);
    const unsigned s = e->status;
    if (s == GIT_STATUS_CURRENT || (s & GIT_STATUS_IGNORED)) continue;
    if (s & GIT_STATUS_WT_NEW && !(s & GIT_STATUS_INDEX_NEW)) {
      lines.push_back("?? " + std::string(e->index_to_workdir->new_file.path));
      continue;
    }
    char x = ' ', y = ' ';
    if (s & GIT_STATUS_INDEX_NEW) x = 'A';
    if (s & GIT_STATUS_INDEX_MODIFIED) x = 'M';
    if (s & GIT_STATUS_INDEX_DELETED) x = 'D';
    if (s & GIT_STATUS_INDEX_RENAMED) x = 'R';
    if (s & GIT_STATUS_INDEX_TYPECHANGE) x = 'T';
    if (s & GIT_STATUS_WT_MODIFIED) y = 'M';
    if (s & GIT_STATUS_WT_DELETED) y = 'D';
    if (s & GIT_STATUS_WT_TYPECHANGE) y = 'T';
    if (s & GIT_STATUS_WT_RENAMED) y = 'R';
    if (s & GIT_STATUS_CONFLICTED) x = y = 'U';
    const git_diff_delta* d = e->head_to_index ? e->head_to_index : e->index_to_workdir;
    std::string path = d->new_file.path ? d->new_file.path : d->old_file.path;
    if ((s & GIT_STATUS_INDEX_RENAMED) && d->old_file.path)
      path = std::string(d->old_file.path) + " -> " + path;
    lines.push_back(std::string{x, y, ' '} + path);
  }
  return lines;
}

// Commits on `tip` that no other ref (branch, remote branch, tag) reaches:
// what deleting the branch would lose. "abc1234 summary" lines.
Result<std::vector<std::string>> unreachable_elsewhere(git_repository* repo, const git_oid& tip,
                                                       const std::string& own_ref) {
  git_revwalk* walk = nullptr;
  if (git_revwalk_new(&walk, repo) != 0) return git::error("cannot walk the history");
  git::Revwalk owned(walk);
  git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  if (git_revwalk_push(walk, &tip) != 0) return git::error("cannot walk from " + own_ref);
  git_reference_iterator* it = nullptr;
  if (git_reference_iterator_new(&it, repo) != 0) return git::error("cannot list the references");
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, it) == 0) {
    git::Ref r(ref);
    const std::string name = git_reference_name(ref);
    if (name == own_ref || name.rfind("refs/", 0) != 0) continue;
    git_object* target = nullptr;
    if (git_reference_peel(&target, ref, GIT_OBJECT_COMMIT) == 0) {
      git_revwalk_hide(walk, git_object_id(target));
      git_object_free(target);
    }
    git_error_clear();
  }
  git_reference_iterator_free(it);
  if (git_repository_head_detached(repo) == 1) {
    git_oid head{};
    if (git_reference_name_to_id(&head, repo, "HEAD") == 0) git_revwalk_hide(walk, &head);
  }
  std::vector<std::string> lost;
  git_oid oid{};
  while (git_revwalk_next(&oid, walk) == 0) {
    git_commit* c = nullptr;
    std::string summary;
    if (git_commit_lookup(&c, repo, &oid) == 0) {
      summary = git_commit_summary(c) ? git_commit_summary(c) : "";
      git_commit_free(c);
    }
    lost.push_back(git::oid_hex(oid, 7) + " " + summary);
  }
  git_error_clear();
  return lost;
}

// Fills what `list` shows about one worktree of ours.
void describe(git_repository* repo, const Project& p, WorkspaceInfo& w) {
  const State state = read_state(p, w.name);
  w.base = state.base;
  w.base_commit = state.base_commit;
  git_reference* branch = nullptr;
  git_oid tip{};
  bool have_tip = false;
  if (git_branch_lookup(&branch, repo, w.branch.c_str(), GIT_BRANCH_LOCAL) == 0) {
    git::Ref owned(branch);
    git_object* target = nullptr;
    if (git_reference_peel(&target, branch, GIT_OBJECT_COMMIT) == 0) {
      tip = *git_object_id(target);
      have_tip = true;
      w.head_commit = git::oid_hex(tip);
      git_object_free(target);
    }
  }
  git_error_clear();
  if (have_tip && !w.base.empty()) {
    git_oid base{};
    bool have_base = false;
    if (w.base.rfind("refs/", 0) == 0) have_base = git_reference_name_to_id(&base, repo, w.base.c_str()) == 0;
    if (!have_base) have_base = git_oid_fromstr(&base, w.base_commit.c_str()) == 0;
    std::size_t ahead = 0, behind = 0;
    if (have_base && git_graph_ahead_behind(&ahead, &behind, repo, &tip, &base) == 0) {
      w.ahead = ahead;
      w.behind = behind;
    }
    git_error_clear();
  }
  std::error_code ec;
  // A link in its place is no workspace (whatever it names is not looked into).
  w.folder_missing = !fs::is_directory(fs::symlink_status(w.path, ec)) || !fs::exists(w.path / ".git", ec);
  if (!w.folder_missing) {
    if (auto changes = workspace_changes(w.path)) {
      w.changes = std::move(changes).value();
      w.dirty = !w.changes.empty();
    }
  }
}

Result<WorkspaceInfo> lookup(git_repository* repo, const Project& p, const std::string& name) {
  PX_TRY(check_workspace_name(name));
  git_worktree* wt = nullptr;
  if (git_worktree_lookup(&wt, repo, name.c_str()) != 0) {
    git_error_clear();
    return Error::not_found("There is no workspace named '" + name + "' in " + p.root.string() +
                            "; `parallex workspace list` shows them");
  }
  git::Worktree owned(wt);
  WorkspaceInfo w;
  w.name = name;
  w.branch = branch_for(name);
  const fs::path recorded = git_worktree_path(wt);
  w.path = p.workspaces_dir() / name;
  w.git_dir = p.common_dir / "worktrees" / name;
  if (!at_its_place(recorded, p, name)) {
    // Beginning with the workspaces folder's path (a `..` after it, another
    // workspace's name): changed since, not a worktree of the user's.
    if (recorded.string().rfind(p.workspaces_dir().string(), 0) == 0)
      return Error::invalid(
          "git's record of the workspace '" + name + "' (" + (w.git_dir / "gitdir").string() + ") names " +
          recorded.string() + ", not " + w.path.string() +
          " where Parallex made it: it was changed since. Parallex acts on neither; look at "
          "it, then remove the workspace's folder and `git worktree prune` yourself");
    return Error::invalid("'" + name + "' is a worktree of your own at " + recorded.string() +
                          ", not a Parallex workspace; manage it with `git worktree`");
  }
  git_buf reason = GIT_BUF_INIT;
  if (git_worktree_is_locked(&reason, wt) > 0) w.locked = reason.ptr ? reason.ptr : "";
  git_buf_dispose(&reason);
  describe(repo, p, w);
  return w;
}

}  // namespace

nlohmann::json WorkspaceInfo::to_json() const {
  nlohmann::json j{{"name", name},
                   {"branch", branch},
                   {"path", path.string()},
                   {"base", base},
                   {"base_commit", base_commit},
                   {"head_commit", head_commit},
                   {"state", folder_missing ? "missing"
                             : dirty        ? "dirty"
                                            : "clean"},
                   {"changes", changes},
                   {"ahead", ahead ? nlohmann::json(*ahead) : nlohmann::json()},
                   {"behind", behind ? nlohmann::json(*behind) : nlohmann::json()}};
  if (locked) j["locked"] = *locked;
  return j;
}

Status check_workspace_name(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return Error::invalid(
        "'" + name + "' is not a usable workspace name: " + why +
        ". Use letters, digits, '.', '_' and '-', starting with a letter or digit (e.g. fix-login).");
  };
  if (name.empty()) return bad("it is empty");
  if (name.size() > 64) return bad("it is longer than 64 characters");
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name.front())) return bad("it must start with a letter or digit");
  for (char c : name)
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return bad(std::string("it contains '") + c + "'");
  if (name.find("..") != std::string::npos) return bad("it contains '..'");
  if (name.back() == '.' || (name.size() >= 5 && name.ends_with(".lock")))
    return bad("it ends in '.' or '.lock'");
  return ok();
}

std::string branch_for(const std::string& name) {
  return "parallex/" + name;
}

Status ensure_excluded(const Project& p) {
  const fs::path info = p.common_dir / "info";
  const fs::path exclude = info / "exclude";
  {
    std::ifstream in(exclude);
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
      if (line == "/.parallex/" || line == "/.parallex" || line == ".parallex/" || line == ".parallex")
        return ok();
    }
  }
  std::error_code ec;
  fs::create_directories(info, ec);
  if (ec) return Error::io("cannot create " + info.string(), ec.value());
  bool needs_newline = false;
  {
    std::ifstream in(exclude, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    needs_newline = !text.empty() && text.back() != '\n';
  }
  std::ofstream out(exclude, std::ios::app);
  out << (needs_newline ? "\n" : "")
      << "# Parallex workspaces, state and the scoped GitHub token\n/.parallex/\n";
  if (!out) return Error::io("cannot add /.parallex/ to " + exclude.string(), errno);
  return ok();
}

Result<WorkspaceInfo> create_workspace(const Project& p, const NewOptions& o) {
  PX_TRY_ASSIGN(auto main, git::open(p.root.string()));
  git_repository* repo = main.get();
  std::string name;
  if (o.name) {
    PX_TRY(check_workspace_name(*o.name));
    name = *o.name;
    if (auto why = taken_because(repo, p, name); !why.empty()) return Error::conflict(why);
  } else {
    for (int attempt = 0; attempt < 50 && name.empty(); ++attempt) {
      std::string candidate = random_name();
      if (taken_because(repo, p, candidate).empty()) name = candidate;
    }
    if (name.empty())
      return Error::conflict("could not find a free workspace name; give one: workspace new NAME");
  }
  PX_TRY_ASSIGN(auto base, resolve_base(repo, p, o.from));
  // Before anything is made: the token file and workspaces must never be committed.
  PX_TRY(ensure_excluded(p));

  std::error_code ec;
  fs::create_directories(p.workspaces_dir(), ec);
  if (ec) return Error::io("cannot create " + p.workspaces_dir().string(), ec.value());
  // Reached without a link: a run at the repository's root may have replaced
  // .parallex or its workspaces folder with one, and the worktree must not be
  // made wherever it leads.
  {
    UniqueFd root(::open(p.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root || !open_beneath(root.get(), ".parallex/workspaces", O_PATH | O_DIRECTORY))
      return Error::invalid(
          p.workspaces_dir().string() +
          " is reached through a symbolic link or is not a folder (something replaced the "
          "folder Parallex keeps workspaces in); nothing was made. Look at it, and remove the "
          "link");
  }
  const bool had_worktrees_dir = exists_nofollow(p.common_dir / "worktrees");

  WorkspaceInfo w;
  w.name = name;
  w.branch = branch_for(name);
  w.path = p.workspaces_dir() / name;
  w.git_dir = p.common_dir / "worktrees" / name;
  w.base = base.name;
  w.base_commit = git::oid_hex(base.commit);

  git_commit* commit = nullptr;
  if (git_commit_lookup(&commit, repo, &base.commit) != 0)
    return git::error("cannot read the commit " + w.base_commit);
  git::Commit owned_commit(commit);
  git_reference* branch = nullptr;
  if (git_branch_create(&branch, repo, w.branch.c_str(), commit, 0) != 0) {
    auto err = git::error("cannot create the branch " + w.branch);
    rollback(repo, p, name, false, had_worktrees_dir);
    return err;
  }
  git::Ref owned_branch(branch);

  git_worktree_add_options opts;
  git_worktree_add_options_init(&opts, GIT_WORKTREE_ADD_OPTIONS_VERSION);
  opts.ref = branch;
  git_worktree* wt = nullptr;
  if (git_worktree_add(&wt, repo, name.c_str(), w.path.c_str(), &opts) != 0) {
    auto err = git::error("cannot make the worktree " + w.path.string());
    rollback(repo, p, name, true, had_worktrees_dir);
    return err;
  }
  git::Worktree owned_wt(wt);
  // An empty config.worktree, so a sealed run's read-only bind has a file to
  // cover (git reads it only with extensions.worktreeConfig).
  {
    std::ofstream touch(w.git_dir / "config.worktree", std::ios::app);
    if (!touch) {
      auto err = Error::io("cannot create " + (w.git_dir / "config.worktree").string(), errno);
      rollback(repo, p, name, true, had_worktrees_dir);
      return err;
    }
  }
  if (auto s = write_state(p, w); !s) {
    rollback(repo, p, name, true, had_worktrees_dir);
    return s.error();
  }
  if (auto real = fs::canonical(w.path, ec); !ec) w.path = real;
  w.head_commit = w.base_commit;
  w.ahead = 0;
  w.behind = 0;
  return w;
}

Result<std::vector<WorkspaceInfo>> list_workspaces(const Project& p) {
  PX_TRY_ASSIGN(auto main, git::open(p.root.string()));
  git_strarray names{};
  if (git_worktree_list(&names, main.get()) != 0)
    return git::error("cannot list the worktrees of " + p.root.string());
  std::vector<WorkspaceInfo> out;
  for (std::size_t i = 0; i < names.count; ++i) {
    auto w = lookup(main.get(), p, names.strings[i]);
    if (w) out.push_back(std::move(w).value());  // a worktree of the user's own is not listed
  }
  git_strarray_dispose(&names);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Result<WorkspaceInfo> find_workspace(const Project& p, const std::string& name) {
  PX_TRY_ASSIGN(auto main, git::open(p.root.string()));
  return lookup(main.get(), p, name);
}

Result<Removal> remove_workspace(const Project& p, const std::string& name, bool force) {
  PX_TRY_ASSIGN(auto main, git::open(p.root.string()));
  git_repository* repo = main.get();
  PX_TRY_ASSIGN(auto w, lookup(repo, p, name));

  std::vector<std::string> lost;
  if (!w.head_commit.empty()) {
    git_oid tip{};
    git_oid_fromstr(&tip, w.head_commit.c_str());
    PX_TRY_ASSIGN(lost, unreachable_elsewhere(repo, tip, "refs/heads/" + w.branch));
  }
  std::vector<std::string> report;
  if (w.locked)
    report.push_back("it is locked" + (w.locked->empty() ? std::string() : " (" + *w.locked + ")"));
  if (!w.changes.empty()) {
    report.push_back(std::to_string(w.changes.size()) + " uncommitted change(s) in " + w.path.string() + ":");
    for (std::size_t i = 0; i < w.changes.size() && i < kMaxListed; ++i)
      report.push_back("    " + w.changes[i]);
    if (w.changes.size() > kMaxListed)
      report.push_back("    ... and " + std::to_string(w.changes.size() - kMaxListed) + " more");
  }
  if (!lost.empty()) {
    report.push_back(std::to_string(lost.size()) + " commit(s) on " + w.branch +
                     " that no other branch, remote branch or tag holds (not pushed or merged):");
    for (std::size_t i = 0; i < lost.size() && i < kMaxListed; ++i) report.push_back("    " + lost[i]);
    if (lost.size() > kMaxListed)
      report.push_back("    ... and " + std::to_string(lost.size() - kMaxListed) + " more");
  }
  if (!report.empty() && !force) {
    std::string message =
        "Workspace '" + name + "' was not removed: it has work that removing it would lose.\n";
    for (const auto& line : report) message += "  " + line + "\n";
    message += "Commit and push (or merge) what you want to keep, or run `parallex workspace rm " + name +
               " --force` to throw it away.";
    return Error::conflict(message);
  }

  // Only the folder Parallex made, and the worktree's own git dir, each by
  // descriptor: never a path read from git's files (a run can rewrite the
  // worktree's `gitdir` to name any folder, which git_worktree_prune would
  // remove) and never through a link planted on the way.
  PX_TRY(remove_beneath(p.root, fs::path(".parallex/workspaces") / name));
  if (auto s = remove_beneath(p.common_dir, fs::path("worktrees") / name); !s)
    return Error{s.error().kind, s.error().message + "; then run `git worktree prune`"};
  git_reference* branch = nullptr;
  if (git_branch_lookup(&branch, repo, w.branch.c_str(), GIT_BRANCH_LOCAL) == 0) {
    git::Ref owned(branch);
    // The ref and its reflog. Not git_branch_delete: it also drops the
    // branch.NAME config section, which a workspace branch never has (the
    // run cannot write .git/config), and libgit2 1.5 leaks PCRE2 match data there.
    if (git_reference_delete(branch) != 0) return git::error("cannot delete the branch " + w.branch);
    git_reflog_delete(repo, ("refs/heads/" + w.branch).c_str());
  }
  git_error_clear();
  (void)remove_beneath(p.root, fs::path(".parallex/state") / (name + ".json"));
  Removal removal;
  if (!report.empty()) removal.discarded = report;
  return removal;
}

Result<std::vector<std::string>> workspace_changes(const fs::path& worktree) {
  PX_TRY_ASSIGN(auto repo, git::open(worktree.string()));
  return status_lines(repo.get());
}

}  // namespace px::workspace
