#include "backend/seal/mounts.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "backend/seal/overlay.hpp"
#include "backend/seal/sys.hpp"
#include "common/paths.hpp"

namespace px::seal::mounts {

namespace {

const char* const kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
constexpr const char* kEmptyFile = ".px-empty";  // source of file hiders; unlinked before exec
// Where the view's skeleton is attached in the seal's namespace while it is
// built (it covers the host's /tmp there, harmlessly: every source is cloned).
constexpr const char* kStaging = "/tmp";
// The caches' layers on the skeleton while their overlays are made.
constexpr const char* kLayers = ".px-layers";

std::size_t depth(const fs::path& p) {
  return static_cast<std::size_t>(std::distance(p.begin(), p.end()));
}

std::uint64_t mount_id(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0) return 0;
  return stx.stx_mnt_id;
}

Status set_attr(int tree, std::uint64_t set, bool recursive, const std::string& what) {
  mount_attr attr{};
  attr.attr_set = set;
  if (::mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) != 0)
    return sys_error("mount_setattr " + what);
  return ok();
}

// The caller's terminal, when the run's stdin, stdout or stderr is one: its
// path on the host (/dev/pts/N), checked to be the very device the fd is.
// Read from /proc/self/fd (no directory scan) while the host's tree is whole.
std::optional<std::string> caller_terminal() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::isatty(fd) != 1) continue;
    char link[64];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char target[256];
    const ssize_t n = ::readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) != 0 || ::stat(target, &named) != 0 || !S_ISCHR(named.st_mode) ||
        named.st_rdev != held.st_rdev || named.st_ino != held.st_ino || named.st_dev != held.st_dev)
      continue;
    return std::string(target);
  }
  return std::nullopt;
}

// A detached copy of the host tree at `host` (with its submounts: a locked
// submount may not be left out, or what it covers would show).
Result<UniqueFd> clone_tree(int dirfd, const char* path, unsigned flags, std::uint64_t attrs,
                            const std::string& what) {
  UniqueFd tree(::open_tree(dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | flags));
  if (!tree) return sys_error("open_tree(OPEN_TREE_CLONE) " + what);
  PX_TRY(set_attr(tree.get(), attrs, (flags & AT_RECURSIVE) != 0, what));
  return tree;
}

Result<UniqueFd> new_tmpfs(const char* mode, std::uint64_t attrs, const std::string& what) {
  UniqueFd ctx(::fsopen("tmpfs", FSOPEN_CLOEXEC));
  if (!ctx) return sys_error("fsopen(tmpfs) for " + what);
  if (::fsconfig(ctx.get(), FSCONFIG_SET_STRING, "mode", mode, 0) != 0 ||
      ::fsconfig(ctx.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return sys_error("fsconfig(tmpfs) for " + what);
  UniqueFd mnt(::fsmount(ctx.get(), FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs)));
  if (!mnt) return sys_error("fsmount(tmpfs) for " + what);
  return mnt;
}

Status attach(int tree, int target, const std::string& what) {
  if (::move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    return sys_error("move_mount onto " + what);
  return ok();
}

enum class Create { none, dir, file };

// Walks the view from its root, one component at a time, never following a
// symlink. A missing component is created only on a mount of our own (the
// skeleton, /dev, the run's temp dir), never in a tree bound from the host.
class Walker {
 public:
  explicit Walker(int root) : root_(root) {}
  void own(int fd) { own_.push_back(mount_id(fd)); }
  int root() const { return root_; }

  UniqueFd reach(const fs::path& view_path, Create create, int& err) const {
    UniqueFd cur(::openat(root_, ".", O_PATH | O_CLOEXEC));
    std::vector<std::string> parts;
    for (const auto& c : view_path.relative_path()) parts.push_back(c.string());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const bool last = i + 1 == parts.size();
      const char* name = parts[i].c_str();
      UniqueFd next(::openat(cur.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!next && errno == ENOENT && create != Create::none && owned(cur.get())) {
        if (!last || create == Create::dir) {
          if (::mkdirat(cur.get(), name, 0755) != 0 && errno != EEXIST) return fail(err);
        } else {
          UniqueFd f(::openat(cur.get(), name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644));
          if (!f) return fail(err);
        }
        next = UniqueFd(::openat(cur.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
      }
      if (!next) return fail(err);
      struct stat st {};
      if (::fstat(next.get(), &st) != 0) return fail(err);
      if (S_ISLNK(st.st_mode)) return fail(err, ELOOP);
      if (!last && !S_ISDIR(st.st_mode)) return fail(err, ENOTDIR);
      cur = std::move(next);
    }
    return cur;
  }

  // For carve-ins and denies that are symlinks: the object they name, resolved
  // as the command would resolve it, but never outside the view.
  UniqueFd resolve(const fs::path& view_path, int& err) const {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(sys_openat2(root_, view_path.relative_path().c_str(), how));
    if (!fd) err = errno;
    return fd;
  }

 private:
  bool owned(int fd) const { return std::find(own_.begin(), own_.end(), mount_id(fd)) != own_.end(); }
  static UniqueFd fail(int& err, int value = 0) {
    err = value ? value : errno;
    return UniqueFd();
  }
  int root_;
  std::vector<std::uint64_t> own_;
};

// Reaches `path`; when it is (or passes through) a symlink, resolves it inside
// the view instead, so protecting a link protects what it points to.
UniqueFd reach_or_resolve(const Walker& walker, const fs::path& path, int& err) {
  UniqueFd fd = walker.reach(path, Create::none, err);
  if (!fd && (err == ELOOP || err == ENOTDIR)) fd = walker.resolve(path, err);
  return fd;
}

// The first link on the way from `base` through the components of `rel`:
// its path relative to `base`, or empty when there is none.
fs::path first_link(int base, const fs::path& rel) {
  UniqueFd cur(::openat(base, ".", O_PATH | O_CLOEXEC));
  fs::path walked;
  for (const auto& part : rel) {
    const std::string name = part.string();
    walked /= name;
    UniqueFd next(::openat(cur.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!next || ::fstat(next.get(), &st) != 0) break;
    if (S_ISLNK(st.st_mode)) return walked;
    cur = std::move(next);
  }
  return {};
}

// `rel` beneath `base`, never through a link: the object, an empty fd when it
// is absent, or ELOOP in `err` when a link is on the way.
UniqueFd open_no_links(int base, const fs::path& rel, int& err) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    open_how how{};
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(sys_openat2(base, rel.empty() ? "." : rel.c_str(), how));
    err = fd ? 0 : errno;
    if (err == EAGAIN) continue;  // a rename raced the lookup: the kernel asks to try again
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0 && S_ISLNK(st.st_mode)) {
      err = ELOOP;  // the last component is the link
      return UniqueFd();
    }
    return fd;
  }
  err = EAGAIN;
  return UniqueFd();
}

// Protecting the run folder's paths in the view (build_view, step 4).
struct Protecting {
  const Walker& walker;  // the view, where what a link leading out names is found
  fs::path run_folder;
  std::vector<std::string> links;  // links leading out, protected as they are: "NAME (a link to TARGET)"
  std::set<fs::path> linked;       // their paths
};

// `path` was renamed, replaced or moved while the seal was set up.
Error changed_meanwhile(const fs::path& path) {
  return Error::conflict(
      path.string() +
      " was renamed or replaced by a process outside the run while the seal was set up, so "
      "the run did not start (nothing of it ran). Run it again once nothing else changes it");
}

// Binds `target` onto itself (with what is mounted beneath it), read-only
// when `read_only` or when it is not a directory. Returns the new mount.
Result<UniqueFd> bind_onto_itself(int target, bool read_only, const fs::path& path) {
  struct stat st {};
  if (::fstat(target, &st) != 0) return sys_error("fstat " + path.string());
  const bool writable = !read_only && S_ISDIR(st.st_mode);
  const std::uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (writable ? 0 : MOUNT_ATTR_RDONLY);
  const unsigned recursive = S_ISLNK(st.st_mode) ? 0 : AT_RECURSIVE;
  PX_TRY_ASSIGN(UniqueFd tree, clone_tree(target, "", AT_EMPTY_PATH | recursive, attrs, path.string()));
  PX_TRY(attach(tree.get(), target, path.string()));
  return tree;
}

// A link on the way to `path` that leads out of the run folder (`link`,
// beneath `base`): protected as it is. The link itself is bound onto itself
// (a mount point: the run cannot rename, remove or replace it), and what
// `path` names through it, found in the view as the command would find it,
// is bound read-only when the view holds it (outside the run folder it holds
// only what the policy grants). Nothing is protected through the link on
// the host's side: its target is not the run folder's.
Status protect_link_leading_out(Protecting& ctx, int base, const fs::path& base_path, const fs::path& link,
                                const fs::path& path, bool read_only) {
  const fs::path link_path = base_path / link;
  if (ctx.linked.insert(link_path).second) {
    int err = 0;
    UniqueFd parent = open_no_links(base, link.parent_path(), err);
    if (!parent) return changed_meanwhile(link_path);
    const std::string name = link.filename().string();
    UniqueFd fd(::openat(parent.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISLNK(st.st_mode)) return changed_meanwhile(link_path);
    char to[PATH_MAX] = {};
    const ssize_t n = ::readlinkat(parent.get(), name.c_str(), to, sizeof to - 1);
    PX_TRY_ASSIGN(UniqueFd tree, bind_onto_itself(fd.get(), true, link_path));
    UniqueFd again(::openat(parent.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!again || mount_id(again.get()) != mount_id(tree.get())) return changed_meanwhile(link_path);
    ctx.links.push_back(link_path.lexically_relative(ctx.run_folder).string() + " (a link to " +
                        (n > 0 ? std::string(to, static_cast<std::size_t>(n)) : std::string("?")) + ")");
  }
  if (!read_only) return ok();  // a parent kept from being renamed: the link's mount does that
  int err = 0;
  UniqueFd target = ctx.walker.resolve(path, err);
  if (!target) return ok();  // not in the view: the run cannot reach it at all
  PX_TRY_ASSIGN(UniqueFd bound, bind_onto_itself(target.get(), true, path));
  return ok();
}

// Protects `rel` beneath `base` (the run folder, or its .git once bound:
// `base_path` says which, for messages), resolved once without following a
// link and bound onto itself through the descriptor that was resolved (read-
// only when `read_only` or not a directory), then reached again by name and
// checked to be that mount. A link on the way that stays beneath `base`
// protects what it names; one leading out is protected as it is
// (protect_link_leading_out). Absent: nothing to bind (the supervisor moves
// aside what a run makes there: protect/quarantine.hpp).
Status protect_beneath(Protecting& ctx, int base, const fs::path& base_path, const fs::path& rel,
                       bool read_only) {
  const fs::path path = base_path / rel;
  int err = 0;
  UniqueFd target = open_no_links(base, rel, err);
  bool followed = false;
  if (!target && err == ELOOP) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    target = UniqueFd(sys_openat2(base, rel.c_str(), how));
    err = target ? 0 : errno;
    if (err == EXDEV || err == ELOOP) {
      const fs::path link = first_link(base, rel);
      if (link.empty()) return changed_meanwhile(path);  // no link there any more
      if (base_path == ctx.run_folder && link == ".git") {
        // Not protected as it is: the repository git uses there lies outside
        // the run folder, and a link the host swaps for a folder would leave
        // that folder unprotected.
        char to[PATH_MAX] = {};
        const ssize_t n = ::readlinkat(base, ".git", to, sizeof to - 1);
        return Error::policy(
            (base_path / link).string() + " is a symbolic link" +
            (n > 0 ? " to " + std::string(to, static_cast<std::size_t>(n)) : std::string()) +
            ", which leads out of the run folder " + ctx.run_folder.string() +
            ": its config and hooks must stay read-only during the run, and through the link the "
            "run would write elsewhere. Replace the link with the folder itself (or a gitfile, "
            "`gitdir: PATH`), or remove it");
      }
      return protect_link_leading_out(ctx, base, base_path, link, path, read_only);
    }
    followed = static_cast<bool>(target);
  }
  if (!target) {
    if (err == ENOENT || err == ENOTDIR) return ok();  // absent (or a dangling link: nothing yet)
    if (err == EAGAIN) return changed_meanwhile(path);
    return sys_error("open " + path.string() + " beneath the run folder", err);
  }
  PX_TRY_ASSIGN(UniqueFd tree, bind_onto_itself(target.get(), read_only, path));
  int again_err = 0;
  UniqueFd again = open_no_links(base, rel, again_err);
  if (!again && again_err == ELOOP && followed) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    again = UniqueFd(sys_openat2(base, rel.c_str(), how));
  } else if (followed) {
    again.reset();  // it was reached through a link, and is not any more
  }
  if (!again || mount_id(again.get()) != mount_id(tree.get())) return changed_meanwhile(path);
  return ok();
}

// The run folder's .git, opened once beneath it (never through a link) and
// checked against what the supervisor found before the seal (ViewPlan::git):
// the very folder it found, or, when it found none, still no folder. Empty
// when it is not a folder.
Result<UniqueFd> open_run_git(int run_dir, const ViewPlan& plan) {
  UniqueFd git(::openat(run_dir, ".git", O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!git && errno != ENOENT) return sys_error("open " + (plan.run_folder / ".git").string());
  struct stat st {};
  const bool folder = git && ::fstat(git.get(), &st) == 0 && S_ISDIR(st.st_mode);
  if (folder != plan.git.folder || (folder && (st.st_dev != plan.git.dev || st.st_ino != plan.git.ino)))
    return changed_meanwhile(plan.run_folder / ".git");
  if (!folder) git.reset();
  return git;
}

// Step 4 of build_view: the run folder's protected paths, parents first.
// .git is opened once and checked to be the folder the supervisor found; it
// is bound onto itself from that descriptor, and everything protected in it
// is reached from that mount's own root, never through the name .git again.
// Once all is mounted, the name .git must reach that mount, or the run does
// not start. A process outside the run that renames or swaps .git at any
// moment meanwhile leaves either that folder protected or a refusal; after
// set-up the mounts go wherever the folder goes (a mount follows the object
// it is on, whatever the host renames), and the run cannot rename a mount point.
Status protect_run_folder(int run_dir, const ViewPlan& plan, const Walker& walker,
                          std::vector<run::Notice>& notes) {
  Protecting ctx{walker, plan.run_folder, {}, {}};
  PX_TRY_ASSIGN(UniqueFd git, open_run_git(run_dir, plan));
  UniqueFd git_mount;  // the root of .git bound onto itself
  const fs::path git_path = plan.run_folder / ".git";
  if (git) {
    // First, whatever its place in the lists: what is beneath it is reached from this mount.
    const bool read_only = std::find(plan.protected_paths.begin(), plan.protected_paths.end(), git_path) !=
                           plan.protected_paths.end();
    PX_TRY_ASSIGN(git_mount, bind_onto_itself(git.get(), read_only, git_path));
  }
  auto protect = [&](const fs::path& path, bool read_only) -> Status {
    const fs::path rel = path.lexically_relative(plan.run_folder);
    if (!git || rel.empty() || *rel.begin() != ".git")
      return protect_beneath(ctx, run_dir, plan.run_folder, rel, read_only);
    if (rel == ".git") return ok();  // bound above
    return protect_beneath(ctx, git_mount.get(), git_path, rel.lexically_relative(".git"), read_only);
  };
  // Parents bound onto themselves, writable: a mount point cannot be renamed,
  // removed or replaced (EBUSY). A gitfile `.git` (`gitdir: ...`), a file, is
  // made read-only: it names where git looks.
  for (const auto& dir : plan.rename_proof) PX_TRY(protect(dir, false));
  for (const auto& path : plan.protected_paths) PX_TRY(protect(path, true));
  if (git) {
    UniqueFd named(::openat(run_dir, ".git", O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!named || mount_id(named.get()) != mount_id(git_mount.get())) return changed_meanwhile(git_path);
  }
  if (!ctx.links.empty()) {
    std::string list;
    for (const auto& l : ctx.links) list += (list.empty() ? "" : ", ") + l;
    notes.push_back(
        {run::NoticeKind::seal,
         "protected as they are, links leading out of the run folder: " + list +
             ". The run cannot change, rename or replace them, and what it reaches through them is "
             "read-only"});
  }
  return ok();
}

Status build_dev(const Walker& walker, Walker& owner, std::map<std::string, UniqueFd>& nodes) {
  int err = 0;
  UniqueFd dir = walker.reach("/dev", Create::dir, err);
  if (!dir) return sys_error("make /dev in the view", err);
  PX_TRY_ASSIGN(UniqueFd dev, new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, "/dev"));
  PX_TRY(attach(dev.get(), dir.get(), "/dev"));
  owner.own(dev.get());
  for (auto& [name, tree] : nodes) {
    UniqueFd f(::openat(dev.get(), name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
    if (!f) return sys_error("make /dev/" + name);
    UniqueFd target(::openat(dev.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!target) return sys_error("open /dev/" + name);
    PX_TRY(attach(tree.get(), target.get(), "/dev/" + name));
  }
  // A private devpts: the run's ptys are its own, none of the host's shows.
  if (::mkdirat(dev.get(), "pts", 0755) != 0) return sys_error("mkdir /dev/pts");
  UniqueFd ctx(::fsopen("devpts", FSOPEN_CLOEXEC));
  if (!ctx || ::fsconfig(ctx.get(), FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) != 0 ||
      ::fsconfig(ctx.get(), FSCONFIG_SET_STRING, "mode", "0620", 0) != 0 ||
      ::fsconfig(ctx.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return sys_error("fsopen/fsconfig(devpts)");
  UniqueFd pts(::fsmount(ctx.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC));
  if (!pts) return sys_error("fsmount(devpts)");
  UniqueFd pts_dir(::openat(dev.get(), "pts", O_PATH | O_NOFOLLOW | O_CLOEXEC));
  PX_TRY(attach(pts.get(), pts_dir.get(), "/dev/pts"));
  if (::mkdirat(dev.get(), "shm", 01777) != 0) return sys_error("mkdir /dev/shm");
  PX_TRY_ASSIGN(UniqueFd shm, new_tmpfs("1777", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "/dev/shm"));
  UniqueFd shm_dir(::openat(dev.get(), "shm", O_PATH | O_NOFOLLOW | O_CLOEXEC));
  PX_TRY(attach(shm.get(), shm_dir.get(), "/dev/shm"));
  const std::pair<const char*, const char*> links[] = {{"ptmx", "pts/ptmx"},
                                                       {"fd", "/proc/self/fd"},
                                                       {"stdin", "/proc/self/fd/0"},
                                                       {"stdout", "/proc/self/fd/1"},
                                                       {"stderr", "/proc/self/fd/2"}};
  for (const auto& [name, target] : links)
    if (::symlinkat(target, dev.get(), name) != 0) return sys_error(std::string("symlink /dev/") + name);
  return ok();
}

}  // namespace

UniqueFd open_git_folder(const fs::path& run_folder) {
  if (run_folder.empty()) return UniqueFd();
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd dir(sys_openat2(AT_FDCWD, run_folder.c_str(), how));
  UniqueFd git(dir ? ::openat(dir.get(), ".git", O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1);
  struct stat st {};
  if (!git || ::fstat(git.get(), &st) != 0 || !S_ISDIR(st.st_mode)) return UniqueFd();
  return git;
}

ViewPlan plan_view(const policy::Policy& policy, const fs::path& backing_root, int run_git_fd,
                   const std::vector<backend::HomeLayer>& home_layers) {
  ViewPlan plan;
  std::map<fs::path, const backend::HomeLayer*> layers;
  for (const auto& l : home_layers) layers[normal_absolute(l.view)] = &l;
  struct Wanted {
    bool writable = false;
    bool state_dir = false;   // a harness state dir (the plugin said it is a directory)
    bool state_file = false;  // a harness state file (the plugin said it is a file)
  };
  std::map<fs::path, Wanted> grants;
  for (const auto& g : policy.grants()) {
    const fs::path path = normal_absolute(g.path);
    if (is_within(path, "/proc") || is_within(path, "/dev") || path == "/") {
      plan.notes.push_back({run::NoticeKind::seal,
                            "left out " + path.string() + ": the view makes its own /, /proc and /dev"});
      continue;
    }
    if (!policy.temp_dir().empty() && is_within(path, policy.temp_dir())) continue;  // mounted at /tmp
    if (!policy.may_read(path)) continue;  // inside a deny: the deny wins
    Wanted& w = grants[path];
    w.writable = w.writable || g.access == policy::Access::write;
    w.state_dir = w.state_dir || (g.create_if_missing && !g.state_file);
    w.state_file = w.state_file || (g.create_if_missing && g.state_file);
  }
  std::size_t fresh_count = 0;
  for (const auto& [path, wanted] : grants) {
    if (layers.count(path)) continue;  // the layer below takes its place
    const bool writable = wanted.writable;
    // An ancestor grant that gives at least as much makes this bind redundant.
    bool covered = false;
    for (const auto& [other, other_wanted] : grants)
      if (other != path && is_within(path, other) && (other_wanted.writable || !writable)) covered = true;
    if (covered) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      // Missing. Nothing is made in the user's tree for it: optional tool
      // dirs and files not written yet are simply absent. A harness state
      // dir or state file (its type is known) is an empty one of the run's
      // own in the view, kept afterwards only if the run wrote into it, so
      // only the path the plugin declared can appear. (In an agent's own home
      // the supervisor made it already, so it is not missing there.)
      if ((wanted.state_dir || wanted.state_file) && writable && !backing_root.empty()) {
        Bind fresh{backing_root / std::to_string(fresh_count++), path, true, false, {}, true};
        fresh.fresh_file = !wanted.state_dir;
        plan.binds.push_back(std::move(fresh));
      }
      continue;
    }
    Bind bind{path, path, writable, false, {}, false};
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      bind.symlink_target = fs::read_symlink(path, ec);
      if (ec) continue;
    }
    plan.binds.push_back(std::move(bind));
  }
  // The harness's guarded files in the user's home: the run's own copy, an
  // overlay on the user's folder, or the user's own read-only.
  for (const auto& [view, layer] : layers) {
    using Kind = backend::HomeLayer::Kind;
    if (!policy.may_read(view)) continue;  // a deny wins here too
    if (layer->kind == Kind::copy) {
      plan.binds.push_back({layer->source, view, true, false, {}, false});
    } else if (layer->kind == Kind::overlay) {
      Bind b{view, view, true, false, {}, false};
      b.overlay_upper = layer->upper;
      b.overlay_work = layer->work;
      b.overlay_scratch = layer->scratch;
      plan.binds.push_back(std::move(b));
    } else {
      struct stat st {};
      if (::lstat(view.c_str(), &st) == 0 && !S_ISLNK(st.st_mode))
        plan.binds.push_back({view, view, false, false, {}, false});
    }
  }
  // A copy's folder that is the skeleton's (the home itself, ~/.claude): a
  // tmpfs of its own, writable as a mount, where Landlock grants nothing.
  {
    std::set<fs::path> parents;
    for (const auto& [view, layer] : layers) {
      if (layer->kind != backend::HomeLayer::Kind::copy) continue;
      const fs::path parent = view.parent_path();
      const bool in_a_bind = std::any_of(plan.binds.begin(), plan.binds.end(), [&](const Bind& b) {
        return !b.scratch && b.symlink_target.empty() && !b.writable_dir && is_within(parent, b.view);
      });
      if (!in_a_bind && parent != "/" && !parent.empty()) parents.insert(parent);
    }
    for (const auto& parent : parents) {
      Bind b{{}, parent, true, false, {}, false};
      b.writable_dir = true;
      plan.binds.push_back(std::move(b));
    }
  }
  if (!policy.temp_dir().empty()) {
    // A tmpfs of the run's own (the host's temp dir stays empty): nothing of
    // the host's paths shows in /proc/self/mountinfo for it.
    plan.binds.push_back({{}, "/tmp", true, true, {}});
    plan.binds.push_back({{}, "/var/tmp", true, true, {}});
    for (const auto& c : policy.cache_layers())
      if (is_within(c.view, "/tmp")) plan.cache_layers.push_back({c.lower, c.view});
  }
  std::stable_sort(plan.binds.begin(), plan.binds.end(), [](const Bind& a, const Bind& b) {
    return depth(a.view) != depth(b.view) ? depth(a.view) < depth(b.view) : a.view < b.view;
  });
  auto under_a_bind = [&](const fs::path& p) {
    return std::any_of(plan.binds.begin(), plan.binds.end(), [&](const Bind& b) {
      return !b.scratch && !b.writable_dir && b.symlink_target.empty() && is_within(p, b.view);
    });
  };
  plan.run_folder = policy.run_folder();
  const fs::path run_git = plan.run_folder.empty() ? fs::path() : plan.run_folder / ".git";
  // What the supervisor found at .git, never looked up by name here: the
  // seal checks it is what the name reaches once everything is bound.
  struct stat git_st {};
  plan.git.folder = run_git_fd >= 0 && ::fstat(run_git_fd, &git_st) == 0 && S_ISDIR(git_st.st_mode);
  if (plan.git.folder) {
    plan.git.dev = git_st.st_dev;
    plan.git.ino = git_st.st_ino;
  }
  const bool agent_home = policy.run_home() != policy.user_home();
  std::set<fs::path> rename_proof;
  if (!run_git.empty()) rename_proof.insert(run_git);
  for (const auto& r : policy.read_only()) {
    if (!under_a_bind(r.path)) continue;
    const bool in_run_folder =
        !plan.run_folder.empty() && r.path != plan.run_folder && is_within(r.path, plan.run_folder);
    if (in_run_folder) {
      plan.protected_paths.push_back(r.path);
      for (fs::path dir = r.path.parent_path(); dir != plan.run_folder && is_within(dir, plan.run_folder);
           dir = dir.parent_path())
        rename_proof.insert(dir);
    } else {
      plan.read_only.push_back(r.path);
    }
    struct stat st {};
    if (::lstat(r.path.c_str(), &st) == 0) continue;
    const fs::path parent = r.path.parent_path();
    if (r.path.filename() == "hooks" && parent == run_git) {
      // Only inside a repository: a run folder without one never gets a stray .git.
      if (plan.git.folder) plan.placeholders.push_back({r.path, true});
    } else if (agent_home && is_within(r.path, policy.run_home())) {
      plan.placeholders.push_back({r.path, false});
    } else if (!plan.git.folder && is_within(r.path, run_git)) {
      // No repository: nothing of .git to protect (a new .git is caught after
      // the run). A worktree's .git file: nothing can be created under it.
    } else if (in_run_folder) {
      // A file another program runs later, not there yet: nothing is made in
      // the user's tree for it; the supervisor moves aside what the run makes
      // there (protect/quarantine.hpp).
    } else {
      plan.notes.push_back(
          {run::NoticeKind::seal,
           r.path.string() + " is read-only in the policy but does not exist, so the run could create it"});
    }
  }
  for (const auto& dir : rename_proof)
    if (std::find(plan.protected_paths.begin(), plan.protected_paths.end(), dir) ==
        plan.protected_paths.end())
      plan.rename_proof.push_back(dir);
  const auto by_depth = [](const fs::path& a, const fs::path& b) {
    return depth(a) != depth(b) ? depth(a) < depth(b) : a < b;
  };
  std::sort(plan.rename_proof.begin(), plan.rename_proof.end(), by_depth);
  std::sort(plan.protected_paths.begin(), plan.protected_paths.end(), by_depth);
  for (const auto& d : policy.denies())
    if (under_a_bind(d.path)) plan.hidden.push_back(d.path);
  // Only where a writable bind reaches: elsewhere no entry can be made anyway.
  for (const auto& f : policy.fixed_folders()) {
    const bool writable = std::any_of(plan.binds.begin(), plan.binds.end(), [&](const Bind& b) {
      return b.writable && !b.scratch && b.symlink_target.empty() && is_within(f.path, b.view);
    });
    if (writable) plan.fixed.push_back({f.path, f.open});
  }
  std::stable_sort(
      plan.fixed.begin(), plan.fixed.end(),
      [&](const ViewPlan::Fixed& a, const ViewPlan::Fixed& b) { return by_depth(a.path, b.path); });
  return plan;
}

void create_placeholders(ViewPlan& plan, int run_git) {
  const fs::path git_path = plan.run_folder.empty() ? fs::path() : plan.run_folder / ".git";
  for (const auto& ph : plan.placeholders) {
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd parent;
    const bool in_git = !git_path.empty() && is_within(ph.path, git_path);
    if (in_git) {
      // In .git: beneath the folder the supervisor found, never by its name.
      if (run_git < 0) continue;
      how.resolve |= RESOLVE_BENEATH;
      const fs::path rel = ph.path.parent_path().lexically_relative(git_path);
      parent = UniqueFd(sys_openat2(run_git, rel.empty() || rel == "." ? "." : rel.c_str(), how));
    } else {
      parent = UniqueFd(sys_openat2(AT_FDCWD, ph.path.parent_path().c_str(), how));
    }
    if (!parent && errno == ENOENT && !in_git) {
      // mkdir -p from the deepest existing ancestor, one component at a time, never through a symlink.
      // (Placeholders lie in an existing .git or in an agent's own home, where the run may write
      // anyway: an agent's ~/.config/fish/config.fish is made, parents included, so it can be bound
      // read-only.)
      fs::path existing = ph.path.parent_path();
      std::vector<std::string> missing;
      while (!existing.empty() && existing != existing.root_path() && ::access(existing.c_str(), F_OK) != 0) {
        missing.push_back(existing.filename().string());
        existing = existing.parent_path();
      }
      UniqueFd cur(sys_openat2(AT_FDCWD, existing.c_str(), how));
      for (auto it = missing.rbegin(); cur && it != missing.rend(); ++it) {
        if (::mkdirat(cur.get(), it->c_str(), 0700) != 0 && errno != EEXIST)
          cur.reset();
        else
          cur = UniqueFd(sys_openat2(cur.get(), it->c_str(), how));
      }
      parent = std::move(cur);
    }
    // A named copy: filename() returns a temporary, and its c_str() would dangle.
    const std::string name = ph.path.filename().string();
    bool made = false;
    if (parent) {
      if (ph.directory) {
        made = ::mkdirat(parent.get(), name.c_str(), 0755) == 0 || errno == EEXIST;
      } else {
        UniqueFd f(
            ::openat(parent.get(), name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644));
        made = f.valid() || errno == EEXIST;
      }
    }
    if (!made)
      plan.notes.push_back({run::NoticeKind::seal, ph.path.string() +
                                                       " is read-only in the policy but could not be made (" +
                                                       errno_name(errno) + "), so the run could create it"});
  }
  // The backing dirs of fresh binds live in the run's private state, which
  // the caller made 0700; a failure leaves the bind out (the run sees no dir).
  for (auto& b : plan.binds) {
    if (!b.fresh) continue;
    std::error_code ec;
    if (b.fresh_file) {
      fs::create_directories(b.host.parent_path(), ec);
      UniqueFd f(ec ? -1
                    : ::open(b.host.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!f) {
        plan.notes.push_back({run::NoticeKind::seal, "left out " + b.view.string() +
                                                         ": cannot make its empty file in the run's state (" +
                                                         errno_name(ec ? ec.value() : errno) + ")"});
        b.host.clear();
      }
      continue;
    }
    fs::create_directories(b.host, ec);
    if (ec) {
      plan.notes.push_back({run::NoticeKind::seal, "left out " + b.view.string() +
                                                       ": cannot make its empty dir in the run's state (" +
                                                       ec.message() + ")"});
      b.host.clear();
    } else {
      ::chmod(b.host.c_str(), 0700);
    }
  }
}

Status enter_private_namespace() {
  if (::unshare(CLONE_NEWNS) != 0) return sys_error("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return sys_error("mount / MS_REC|MS_PRIVATE");
  return ok();
}

// Each cache layer (overlay.hpp): its upper and work dirs in a tmpfs of its
// own, staged on the view's skeleton at /tmp/.px-layers (the skeleton is
// staged at the namespace's /tmp while the view is built) and unmounted from
// there once every overlay holds it: overlayfs keeps a private copy of the
// upper layer's mount, so the command never sees it. A layer that cannot be
// mounted leaves the run's folder empty, with a note; the run still works.
void mount_cache_layers(const ViewPlan& plan, const Walker& walker, const std::vector<UniqueFd>& lowers,
                        std::vector<run::Notice>& notes) {
  if (plan.cache_layers.empty()) return;
  auto skipped = [&](const ViewPlan::CacheLayer& c, const std::string& why) {
    notes.push_back({run::NoticeKind::seal, "your cache " + c.lower.string() + " is not shown at " +
                                                c.view.string() + " (" + why + "): the run's starts empty"});
  };
  int err = 0;
  UniqueFd stage = walker.reach(fs::path("/") / kLayers, Create::dir, err);
  auto store = new_tmpfs("0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the caches' layers");
  if (!stage || !store || !attach(store.value().get(), stage.get(), "the caches' layers")) {
    for (const auto& c : plan.cache_layers) skipped(c, "no tmpfs for its layer");
    return;
  }
  const int layers = store.value().get();
  for (std::size_t i = 0; i < plan.cache_layers.size(); ++i) {
    const auto& c = plan.cache_layers[i];
    if (!lowers[i]) {
      skipped(c, "it is gone or became a link");
      continue;
    }
    const std::string n = std::to_string(i), upper_name = n + "/upper", work_name = n + "/work";
    if (::mkdirat(layers, n.c_str(), 0700) != 0 || ::mkdirat(layers, upper_name.c_str(), 0755) != 0 ||
        ::mkdirat(layers, work_name.c_str(), 0700) != 0) {
      skipped(c, sys_error("mkdir its layer").message);
      continue;
    }
    UniqueFd upper(::openat(layers, upper_name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    UniqueFd work(::openat(layers, work_name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    UniqueFd target = walker.reach(c.view, Create::dir, err);
    if (!upper || !work || !target) {
      skipped(c, std::string("its folder: ") + errno_name(target ? errno : err));
      continue;
    }
    auto tree = overlay::mount_layers(lowers[i].get(), upper.get(), work.get());
    if (!tree) {
      skipped(c, tree.error().message);
      continue;
    }
    if (auto st = attach(tree.value().get(), target.get(), c.view.string()); !st)
      skipped(c, st.error().message);
  }
  const std::string staged = std::string(kStaging) + "/" + kLayers;
  if (::umount2(staged.c_str(), MNT_DETACH) != 0 || ::unlinkat(walker.root(), kLayers, AT_REMOVEDIR) != 0)
    notes.push_back({run::NoticeKind::seal, "the caches' layers stay at /.px-layers in the run's view: " +
                                                sys_error("unmount them").message});
}

Result<UniqueFd> build_view(const ViewPlan& plan, std::vector<run::Notice>& notes) {
  // 1. Clone every host source first, while the host's tree is still whole.
  std::vector<UniqueFd> sources(plan.binds.size());
  // The overlays' layers: the user's folder and the run's upper and work dirs.
  struct OverlayDirs {
    UniqueFd lower, upper, work;
  };
  std::map<std::size_t, OverlayDirs> overlays;
  for (std::size_t i = 0; i < plan.binds.size(); ++i) {
    const Bind& b = plan.binds[i];
    if (!b.symlink_target.empty() || b.host.empty()) continue;
    if (!b.overlay_upper.empty()) {
      OverlayDirs& o = overlays[i];
      o.lower = UniqueFd(::open(b.host.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      o.upper = UniqueFd(::open(b.overlay_upper.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      o.work = UniqueFd(::open(b.overlay_work.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      // The fallback, cloned now too: a read-only bind of the user's folder,
      // or for a scratch folder the run's upper dir alone, writable.
      auto tree = b.overlay_scratch
                      ? clone_tree(AT_FDCWD, b.overlay_upper.c_str(), AT_SYMLINK_NOFOLLOW,
                                   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, b.overlay_upper.string())
                      : clone_tree(AT_FDCWD, b.host.c_str(), AT_RECURSIVE | AT_SYMLINK_NOFOLLOW,
                                   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_RDONLY, b.host.string());
      if (tree) sources[i] = std::move(tree).value();
      continue;
    }
    const std::uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (b.writable ? 0 : MOUNT_ATTR_RDONLY);
    if (b.host == plan.run_folder) {
      // The run folder (canonical when the policy was made) is resolved
      // without following any link: one swapped in for it since (or for a
      // folder above it) fails the run instead of redirecting its writes.
      open_how how{};
      how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
      how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
      UniqueFd dir(sys_openat2(AT_FDCWD, b.host.c_str(), how));
      if (!dir)
        return Error::conflict("the run folder " + b.host.string() +
                               " cannot be opened without following a link (" + errno_name(errno) +
                               "): it was replaced or moved while the seal was set up");
      PX_TRY_ASSIGN(sources[i],
                    clone_tree(dir.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, attrs, b.host.string()));
      continue;
    }
    // The last component is not followed: a grant that became a link since
    // the plan was made is left out, never bound where the link points.
    auto tree =
        clone_tree(AT_FDCWD, b.host.c_str(), AT_RECURSIVE | AT_SYMLINK_NOFOLLOW, attrs, b.host.string());
    if (!tree) {
      notes.push_back({run::NoticeKind::seal, "left out " + b.host.string() + ": " + tree.error().message});
      continue;
    }
    sources[i] = std::move(tree).value();
  }
  // The user's caches, opened now for the same reason (one under the host's
  // /tmp is covered once the view's root is staged there). Each is the folder
  // itself, never a link in its place.
  std::vector<UniqueFd> cache_lowers(plan.cache_layers.size());
  for (std::size_t i = 0; i < plan.cache_layers.size(); ++i)
    cache_lowers[i] =
        UniqueFd(::open(plan.cache_layers[i].lower.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  std::map<std::string, UniqueFd> nodes;
  for (const char* name : kDevNodes) {
    const std::string path = std::string("/dev/") + name;
    // Device nodes need dev (no MOUNT_ATTR_NODEV) but never exec or suid.
    PX_TRY_ASSIGN(UniqueFd tree,
                  clone_tree(AT_FDCWD, path.c_str(), 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, path));
    nodes.emplace(name, std::move(tree));
  }
  // The run's terminal gets a name in the view. Its host name (/dev/pts/N)
  // belongs to the host's devpts, which the view does not show: the run's
  // /dev/pts is an instance of its own, where N may name one of the run's own
  // ptys. So the terminal is bound at /dev/console, as container runtimes
  // do, where ttyname() finds it (`tty` prints /dev/console). This gives the
  // run no new access: it holds the terminal already (fds 0-2), and TIOCSTI
  // and TIOCLINUX stay refused by the filter. A terminal that cannot be
  // bound is left nameless, as before (the run still works).
  if (const auto terminal = caller_terminal()) {
    auto tree = clone_tree(AT_FDCWD, terminal->c_str(), 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, *terminal);
    if (tree)
      nodes.emplace("console", std::move(tree).value());
    else
      notes.push_back(
          {run::NoticeKind::seal,
           "the run's terminal has no name inside it (tty says \"not a tty\"): " + tree.error().message});
  }

  // 2. The skeleton: a tmpfs attached at a staging point (covering it is
  // harmless now: every source is already cloned). It becomes / later.
  PX_TRY_ASSIGN(UniqueFd root, new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the view's root"));
  if (::move_mount(root.get(), "", AT_FDCWD, kStaging, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    return sys_error("move_mount the view's root to /tmp (staging)");
  Walker walker(root.get());
  walker.own(root.get());

  // 3. /dev, then the granted trees, parents first.
  PX_TRY(build_dev(walker, walker, nodes));
  int err = 0;
  UniqueFd scratch;  // the run's temp dir: one tmpfs, at /tmp and at /var/tmp
  for (std::size_t i = 0; i < plan.binds.size(); ++i) {
    const Bind& b = plan.binds[i];
    if (b.scratch) {
      UniqueFd target = walker.reach(b.view, Create::dir, err);
      if (!target) return sys_error("make " + b.view.string() + " in the view", err);
      UniqueFd tree;
      if (!scratch) {
        PX_TRY_ASSIGN(tree, new_tmpfs("1777", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the run's temp dir"));
      } else {
        // The same tmpfs again (cloned once it is attached in this namespace).
        PX_TRY_ASSIGN(tree, clone_tree(scratch.get(), "", AT_EMPTY_PATH, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                       "the run's temp dir"));
      }
      PX_TRY(attach(tree.get(), target.get(), b.view.string()));
      walker.own(tree.get());
      if (!scratch) scratch = std::move(tree);
      continue;
    }
    if (b.writable_dir) {
      UniqueFd target = walker.reach(b.view, Create::dir, err);
      if (!target) return sys_error("make " + b.view.string() + " in the view", err);
      PX_TRY_ASSIGN(UniqueFd tree, new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                             b.view.string()));
      PX_TRY(attach(tree.get(), target.get(), b.view.string()));
      walker.own(tree.get());
      continue;
    }
    if (const auto o = overlays.find(i); o != overlays.end()) {
      UniqueFd target = walker.reach(b.view, Create::dir, err);
      if (!target) return sys_error("reach " + b.view.string() + " in the view", err);
      Result<UniqueFd> tree = Error::io("its layers could not be opened", 0);
      if (o->second.lower && o->second.upper && o->second.work)
        tree = overlay::mount_layers(o->second.lower.get(), o->second.upper.get(), o->second.work.get());
      if (tree) {
        PX_TRY(attach(tree.value().get(), target.get(), b.view.string()));
        continue;
      }
      // Never the user's folder writable: read-only instead, and said.
      if (!sources[i]) return Error::io("neither an overlay nor a read-only bind of " + b.view.string(), 0);
      notes.push_back(
          {run::NoticeKind::seal, b.view.string() +
                                      (b.overlay_scratch ? " is an empty folder of the run's own in this run"
                                                         : " is read-only in this run") +
                                      ": the run's own layer over it could not be mounted (" +
                                      tree.error().message + ")"});
      PX_TRY(attach(sources[i].get(), target.get(), b.view.string()));
      continue;
    }
    if (!b.symlink_target.empty()) {
      UniqueFd parent = walker.reach(b.view.parent_path(), Create::dir, err);
      if (parent && ::symlinkat(b.symlink_target.c_str(), parent.get(), b.view.filename().c_str()) != 0 &&
          errno != EEXIST)
        notes.push_back(
            {run::NoticeKind::seal, "left out the link " + b.view.string() + ": " + errno_name(errno)});
      continue;
    }
    if (!sources[i]) continue;
    struct stat st {};
    if (::fstat(sources[i].get(), &st) != 0) return sys_error("fstat the clone of " + b.host.string());
    if (S_ISLNK(st.st_mode)) {
      notes.push_back({run::NoticeKind::seal,
                       "left out " + b.view.string() + ": it became a link while the seal was set up"});
      continue;
    }
    UniqueFd target = walker.reach(b.view, S_ISDIR(st.st_mode) ? Create::dir : Create::file, err);
    if (!target) {
      notes.push_back(
          {run::NoticeKind::seal, "left out " + b.view.string() + ": its mount point " + errno_name(err)});
      continue;
    }
    PX_TRY(attach(sources[i].get(), target.get(), b.view.string()));
  }

  // 3b. The user's caches beneath the run's own folders in /tmp.
  mount_cache_layers(plan, walker, cache_lowers, notes);

  // 4. The run folder's protected paths (protect_run_folder).
  if (!plan.run_folder.empty() && (!plan.rename_proof.empty() || !plan.protected_paths.empty())) {
    UniqueFd run_dir = walker.reach(plan.run_folder, Create::none, err);
    if (run_dir) PX_TRY(protect_run_folder(run_dir.get(), plan, walker, notes));
  }
  // 5. Other read-only carve-ins (an agent's shell rc files, its keys): bound
  // read-only onto themselves. A failure here fails the run (fail closed).
  for (const auto& path : plan.read_only) {
    UniqueFd target = reach_or_resolve(walker, path, err);
    if (!target) {
      if (err == ENOENT || err == ENOTDIR) continue;  // absent, or under a gitfile (a worktree)
      return sys_error("protect " + path.string() + " read-only", err);
    }
    PX_TRY_ASSIGN(UniqueFd tree,
                  clone_tree(target.get(), "", AT_EMPTY_PATH | AT_RECURSIVE,
                             MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, path.string()));
    PX_TRY(attach(tree.get(), target.get(), path.string()));
  }
  // 5b. Folders of fixed entries (Parallex's own state holding a path the run
  // keeps, under a writable grant): read-only onto themselves, so the run can
  // add no entry there (EROFS), nor remove or rename one. Each open entry is
  // bound onto itself first, so the folder's read-only clone holds it as a
  // mount of its own that keeps its access (the read-only attribute is set
  // on the folder's own mount, not recursively). Parents first: a deeper
  // fixed folder is an open entry of its parent, reached through it.
  for (const auto& f : plan.fixed) {
    UniqueFd dir = reach_or_resolve(walker, f.path, err);
    if (!dir) {
      if (err == ENOENT || err == ENOTDIR) continue;
      return sys_error("fix the entries of " + f.path.string(), err);
    }
    for (const auto& entry : f.open) {
      UniqueFd target = reach_or_resolve(walker, entry, err);
      if (!target) {
        if (err == ENOENT || err == ENOTDIR) continue;  // a kept path not made yet: nothing to keep
        return sys_error("keep " + entry.string(), err);
      }
      PX_TRY_ASSIGN(UniqueFd tree,
                    clone_tree(target.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, 0, entry.string()));
      PX_TRY(attach(tree.get(), target.get(), entry.string()));
    }
    UniqueFd tree(
        ::open_tree(dir.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (!tree) return sys_error("open_tree(OPEN_TREE_CLONE) " + f.path.string());
    PX_TRY(set_attr(tree.get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false,
                    f.path.string()));
    PX_TRY(attach(tree.get(), dir.get(), f.path.string()));
  }
  // 6. Denied paths inside granted trees: an empty read-only tmpfs over a
  // directory, an empty read-only file over anything else, both mode 0000 (the
  // command holds no capability to override it). Read-only, never a writable
  // sink: a write there fails instead of vanishing.
  struct stat empty {};
  {
    UniqueFd f(::openat(root.get(), kEmptyFile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0));
    if (!f || ::fstat(f.get(), &empty) != 0) return sys_error("make the empty file for hidden files");
  }
  for (const auto& path : plan.hidden) {
    UniqueFd target = reach_or_resolve(walker, path, err);
    if (!target) {
      if (err == ENOENT || err == ENOTDIR) continue;  // absent, or under a gitfile (a worktree)
      return sys_error("hide " + path.string(), err);
    }
    struct stat st {};
    if (::fstat(target.get(), &st) != 0) return sys_error("fstat " + path.string());
    // Hidden already (a link and the file it names, both denied): covering
    // the cover would make the empty file's own name a mount point.
    if (st.st_dev == empty.st_dev && st.st_ino == empty.st_ino) continue;
    constexpr std::uint64_t kSealed =
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    UniqueFd cover;
    if (S_ISDIR(st.st_mode)) {
      PX_TRY_ASSIGN(cover, new_tmpfs("0000", kSealed, "hiding " + path.string()));
    } else {
      PX_TRY_ASSIGN(cover, clone_tree(root.get(), kEmptyFile, 0, kSealed, "hiding " + path.string()));
    }
    PX_TRY(attach(cover.get(), target.get(), "hide " + path.string()));
  }
  // 7. Generated files (the run's /etc/resolv.conf and /etc/hosts): written on
  // the skeleton, bound read-only over the path, the source name unlinked (the
  // mount keeps the file). A path that is a symlink is covered where it points
  // inside the view; a target outside every bind is made on the skeleton.
  for (std::size_t i = 0; i < plan.generated.size(); ++i) {
    const auto& g = plan.generated[i];
    const std::string source = ".px-generated-" + std::to_string(i);
    {
      UniqueFd f(::openat(root.get(), source.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
      if (!f ||
          ::write(f.get(), g.content.data(), g.content.size()) != static_cast<ssize_t>(g.content.size()))
        return sys_error("write the run's " + g.view.string());
    }
    UniqueFd target = walker.reach(g.view, Create::file, err);
    if (!target && err == ELOOP) {
      target = walker.resolve(g.view, err);
      if (!target && err == ENOENT) {
        // A dangling link in the view (/etc/resolv.conf -> /run/systemd/...):
        // its target is made on the skeleton, where nothing of the host is.
        char link[PATH_MAX] = {};
        UniqueFd parent = walker.reach(g.view.parent_path(), Create::none, err);
        const ssize_t n =
            parent ? ::readlinkat(parent.get(), g.view.filename().c_str(), link, sizeof link - 1) : -1;
        if (n > 0) {
          const fs::path to(std::string(link, static_cast<std::size_t>(n)));
          target = walker.reach(to.is_absolute() ? to : (g.view.parent_path() / to).lexically_normal(),
                                Create::file, err);
        }
      }
    }
    if (!target) {
      notes.push_back({run::NoticeKind::seal, "the run's " + g.view.string() +
                                                  " could not be put in place (" + errno_name(err) +
                                                  "): programs inside see the host's"});
    } else {
      PX_TRY_ASSIGN(UniqueFd tree,
                    clone_tree(root.get(), source.c_str(), 0,
                               MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                               "the run's " + g.view.string()));
      PX_TRY(attach(tree.get(), target.get(), g.view.string()));
    }
    if (::unlinkat(root.get(), source.c_str(), 0) != 0) return sys_error("unlink " + source);
  }
  return root;
}

Status enter_view(UniqueFd view_root) {
  // pivot_root(".", "."): the host's root ends up stacked over the view at
  // "/", and detaching it leaves the view alone; no path of the host remains.
  if (::fchdir(view_root.get()) != 0) return sys_error("fchdir to the view");
  if (::syscall(SYS_pivot_root, ".", ".") != 0) return sys_error("pivot_root(., .)");
  if (::umount2(".", MNT_DETACH) != 0) return sys_error("umount2(old root, MNT_DETACH)");
  if (::chdir("/") != 0) return sys_error("chdir /");
  if (::unlinkat(AT_FDCWD, (std::string("/") + kEmptyFile).c_str(), 0) != 0)
    return sys_error("unlink the empty file");
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  for (const char* path : {"/dev", "/"})
    if (::mount_setattr(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &ro, sizeof ro) != 0)
      return sys_error(std::string("mount_setattr ") + path + " read-only");
  return ok();
}

}  // namespace px::seal::mounts
