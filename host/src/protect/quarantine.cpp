#include "protect/quarantine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <string_view>
#include <thread>

#include "common/beneath.hpp"
#include "common/clock.hpp"
#include "common/git_files.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/tree_copy.hpp"
#include "common/unique_fd.hpp"
#include "protect/git_reads.hpp"
#include "protect/repository_walk.hpp"

namespace px::protect {

namespace {

constexpr std::size_t kMaxCheckedFile = 256 * 1024;  // a git file larger than this is not read: moved aside
constexpr int kMaxGitDepth = 4;                      // modules of modules
constexpr off_t kMaxKeptOriginal = 64 * 1024;        // a git file kept to put back when a run changes it

std::string read_small(int fd, std::size_t limit, bool& too_big) {
  std::string out;
  char buf[4096];
  too_big = false;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > limit) {
      too_big = true;
      break;
    }
  }
  return out;
}

// Printable, one line per line, at most `lines` lines of `max` bytes: what a
// user reads of a file a run left. Redacted afterwards.
std::string first_lines(const std::string& text, int lines, std::size_t max) {
  std::string out;
  int count = 0;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      if (++count >= lines) break;
      out += " | ";
    } else if (c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80) {
      out += static_cast<char>(c);
    } else {
      out += '?';
    }
  }
  while (out.size() >= 3 && out.compare(out.size() - 3, 3, " | ") == 0) out.resize(out.size() - 3);
  if (text.size() > max || count >= lines) out += " ...";
  return out;
}

// What a moved file or folder held, read from its copy in the record folder.
std::string describe_contents(const fs::path& moved) {
  std::string out;
  std::error_code ec;
  const auto status = fs::symlink_status(moved, ec);
  auto file_line = [](const fs::path& file) {
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0) return std::string("(unreadable)");
    bool too_big = false;
    const std::string text = read_small(fd.get(), 1024, too_big);
    return std::to_string(st.st_size) + " bytes" + (text.empty() ? "" : ": " + first_lines(text, 6, 400));
  };
  if (fs::is_symlink(status)) {
    out = "a link to " + fs::read_symlink(moved, ec).string();
  } else if (fs::is_regular_file(status)) {
    out = file_line(moved);
  } else if (fs::is_directory(status)) {
    int shown = 0, total = 0;
    for (fs::recursive_directory_iterator it(moved, fs::directory_options::none, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
      ++total;
      if (shown >= 8) continue;
      ++shown;
      const std::string name = it->path().lexically_relative(moved).string();
      out += (out.empty() ? "" : "; ") + name + " (" +
             (it->is_symlink(ec) ? "a link to " + fs::read_symlink(it->path(), ec).string()
                                 : file_line(it->path())) +
             ")";
    }
    if (total > shown) out += "; and " + std::to_string(total - shown) + " more";
    if (total == 0) out = "nothing but empty folders";
  }
  if (out.size() > 2000) out = out.substr(0, 2000) + " ...";
  return redact(out);
}

// The first link on the way from the run folder through the folders of
// `rel` (a link the run may have planted), or nothing.
std::optional<fs::path> first_link_on_the_way(int run_dir, const fs::path& rel) {
  UniqueFd cur(::openat(run_dir, ".", O_PATH | O_CLOEXEC));
  fs::path walked;
  for (const auto& part : rel) {
    struct stat st {};
    if (!cur || ::fstatat(cur.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    walked /= part;
    if (S_ISLNK(st.st_mode)) return walked;
    if (!S_ISDIR(st.st_mode)) return std::nullopt;
    cur = UniqueFd(::openat(cur.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return std::nullopt;
}

constexpr std::size_t kMaxInProgressEntries = 4096;  // files of a rebase's state looked at, at most
constexpr std::size_t kMaxLooseObjects = 100000;     // loose objects a sweep verifies, at most
constexpr std::uint64_t kMaxObjectBytes = 256u
                                          << 20;  // bytes of objects (loose and packed) it reads, at most
const char* const kOutsideFolder = "outside-the-run-folder";  // in quarantine/, what came from outside_

std::int64_t ctime_ns_of(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
}

// A small file read whole (a gitfile, head-name), or nullopt.
std::optional<std::string> read_small_file(int fd, std::size_t limit) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  bool too_big = false;
  std::string text = read_small(fd, limit, too_big);
  if (too_big) return std::nullopt;
  return text;
}

// What a gitfile names, as git reads it: "gitdir: " and the path, up to the
// end of the line (trailing white space and a CR dropped); nullopt for what
// git would refuse.
std::optional<std::string> gitfile_target(const std::string& text) {
  constexpr std::string_view prefix = "gitdir: ";
  if (text.rfind(prefix, 0) != 0) return std::nullopt;
  std::string target = text.substr(prefix.size());
  if (const auto nl = target.find('\n'); nl != std::string::npos) target.resize(nl);
  while (!target.empty() && (target.back() == '\r' || target.back() == ' ' || target.back() == '\t'))
    target.pop_back();
  if (target.empty() || target.find('\0') != std::string::npos) return std::nullopt;
  return target;
}

}  // namespace

// The submodules' git dirs in the git dir `rel`: modules are named by their
// path, which may hold '/', so a folder with a HEAD is a git dir and any
// other is a step of a name.
std::vector<fs::path> Quarantine::module_git_dirs(const fs::path& rel) const {
  std::vector<fs::path> out;
  std::vector<std::pair<fs::path, int>> pending{{rel / "modules", 0}};
  while (!pending.empty()) {
    auto [dir, steps] = pending.back();
    pending.pop_back();
    UniqueFd fd = open_at(dir, O_RDONLY | O_DIRECTORY);
    if (!fd || steps > 8) continue;
    for (const auto& name : names_in(fd.get())) {
      struct stat st {};
      if (::fstatat(fd.get(), (name + "/HEAD").c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        out.push_back(dir / name);
      else if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
        pending.push_back({dir / name, steps + 1});
    }
  }
  return out;
}

namespace {

// Repositories inside the run folder other than its own (a clone in
// vendor/x), found by the walk of repository_walk.hpp. At the start
// (kStartWalk) a repository's own nested ones are its business; at the end
// (kEndWalk) they are looked into too.
// They are not read-only in the run (a build that removes build/_deps, where
// CMake clones, must still work); what changes in their git dirs is checked
// after it. The start's walk fills the walk cache the end's then takes
// unchanged folders from, so even a run folder's first run reads at the end
// only the folders that changed in the run (and those too new to trust).
// The start's walk is on the way to the command's start, and what it leaves
// out the end's finds: it stops after 1,024 folders however cheap.
constexpr WalkBounds kStartWalk{/*max_depth=*/2, /*max_reads=*/256, /*into_repositories=*/false,
                                /*max_visits=*/1024};
constexpr WalkBounds kEndWalk{/*max_depth=*/64, /*max_reads=*/512, /*into_repositories=*/true,
                              /*max_visits=*/WalkCache::kMaxFolders};
constexpr std::size_t kUnvisitedNamed = 20;  // folders a walk left out named in its notice

// What the end's walk did not look into, as a Quarantined of kind
// "unvisited" (describe() says it; nothing was moved).
std::optional<Quarantined> unvisited_report(const WalkFound& walk, const fs::path& run_folder,
                                            const std::string& when) {
  if (walk.unvisited.empty() && walk.too_deep.empty()) return std::nullopt;
  Quarantined q;
  q.path = run_folder;
  q.kind = "unvisited";
  q.when = when;
  q.at = iso_utc_now();
  std::string why;
  if (!walk.unvisited.empty())
    why = "a walk reads at most " + std::to_string(kEndWalk.max_reads) +
          " folders that changed since the last one and visits at most " +
          std::to_string(kEndWalk.max_visits);
  if (!walk.too_deep.empty())
    why += std::string(why.empty() ? "" : "; ") + "a walk goes " + std::to_string(kEndWalk.max_depth) +
           " levels deep at most";
  q.why = why;
  std::string list;
  std::size_t named = 0;
  for (const auto* paths : {&walk.unvisited, &walk.too_deep}) {
    for (const auto& p : *paths) {
      if (named == kUnvisitedNamed) break;
      const bool deep = paths == &walk.too_deep;
      list += (named++ ? ", " : "") + p.string() + (deep ? "/*" : "");
    }
  }
  const std::size_t total = walk.unvisited.size() + walk.too_deep.size();
  if (total > named) list += " and " + std::to_string(total - named) + " more";
  q.contents =
      std::to_string(total) + " folder" + (total == 1 ? "" : "s") + " and what is beneath them: " + list;
  return q;
}

}  // namespace

std::string describe(const Quarantined& q, const fs::path& run_folder) {
  if (q.kind == "git-came-and-went")
    return "the run folder had no .git folder when the run started, and one came and went at " +
           (run_folder / ".git").string() +
           " during it (a process outside moving a repository in and out?). It "
           "was not protected, and it was not there to check " +
           q.when + ": look at it before you run git there";
  if (q.kind == "unvisited")
    return "not looked into for repositories the run made " + q.when + ": " + q.contents + " (" + q.why +
           "). A repository the run made there was not checked: git would run its hooks and config as you. "
           "Look before you run git in them";
  if (q.kind == "unverified")
    return "not verified " + q.when + ": " + q.contents + " the run wrote in " + q.path.string() + " (" +
           q.why + "). Check them before you check out a branch: `git fsck` reads every object through";
  // Outside the run folder (a workspace's git dir in the main repository): the whole path.
  const std::string rel =
      is_within(q.path, run_folder) ? q.path.lexically_relative(run_folder).string() : q.path.string();
  if (q.moved_to.empty() && q.error.empty()) return rel + " (" + q.why + ") " + q.when + ": " + q.restored;
  if (!q.error.empty())
    return "could not move aside " + rel + " (" + q.why + "): " + q.error +
           ". Review or remove it yourself " + "before you open the folder in that program";
  std::string out = "moved aside " + rel + " (" + q.why + ") " + q.when +
                    "; it held: " + (q.contents.empty() ? "(not read)" : q.contents) + ". It is in " +
                    q.moved_to.string();
  if (!q.restored.empty()) out += "; " + q.restored;
  return out;
}

Quarantine::Quarantine(const policy::Policy& policy, fs::path record_dir)
    : run_folder_(policy.run_folder()), record_dir_(std::move(record_dir)), start_ns_(change_clock_now_ns()) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, AT_FDCWD, run_folder_.c_str(), &how, sizeof how);
  run_dir_ = fd >= 0 ? static_cast<int>(fd) : -1;
  if (run_dir_ < 0) return;  // nothing can be checked (the run's seal fails on the same folder)
  open_git_dir();            // first: every later look at .git goes through it (at())
  for (const auto* r : policy.project_files()) {
    Protected p;
    p.rel = r->path.lexically_relative(run_folder_);
    p.reason = r->reason;
    UniqueFd parent = at(p.rel.parent_path(), O_PATH | O_DIRECTORY);
    p.parent_ok_at_start = !first_link_on_the_way(run_dir_, p.rel.parent_path());
    if (parent) {
      struct stat st {};
      if (::fstatat(parent.get(), p.rel.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        // For a link, its change time: a link made again in its place differs there.
        p.start = {true,
                   st.st_dev,
                   st.st_ino,
                   st.st_size,
                   static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec,
                   S_ISLNK(st.st_mode),
                   {}};
        if (p.start.link) {
          char target[PATH_MAX] = {};
          const ssize_t n = ::readlinkat(parent.get(), p.rel.filename().c_str(), target, sizeof target - 1);
          if (n > 0) p.start.link_target.assign(target, static_cast<std::size_t>(n));
        }
      }
    }
    protected_.push_back(std::move(p));
  }
  // Loaded now, before anything of the run exists: what the run could do to
  // the file (it cannot: Parallex's state is denied to it) is never read by
  // this run's walks, and save() replaces a file that is not the one read.
  walk_cache_ = WalkCache::load(parallex_state_dir() / "walk", run_folder_, run_dir_);
  nested_ = find_repositories(run_dir_, kStartWalk, walk_cache_).repositories;
  find_outside(policy);
  remember_git();
}

void Quarantine::open_git_dir() {
  UniqueFd git = open_beneath(run_dir_, ".git", O_PATH);
  struct stat st {};
  if (git && ::fstat(git.get(), &st) == 0 && S_ISDIR(st.st_mode)) git_dir_ = git.release();
}

UniqueFd Quarantine::at(const fs::path& rel, int flags) const {
  auto part = rel.begin();
  const int git = checking_git_ >= 0 ? checking_git_ : git_dir_;
  if (git >= 0 && part != rel.end() && *part == ".git") {
    fs::path beneath;
    for (++part; part != rel.end(); ++part) beneath /= *part;
    return open_beneath(git, beneath, flags);
  }
  return open_beneath(run_dir_, rel, flags);
}

Quarantine::~Quarantine() {
  if (git_dir_ >= 0) ::close(git_dir_);
  if (run_dir_ >= 0) ::close(run_dir_);
  for (const auto& o : outside_)
    if (o.fd >= 0) ::close(o.fd);
}

void Quarantine::find_outside(const policy::Policy& policy) {
  // The run folder opened without a link from "/" (above): its path is the
  // one the kernel resolves, what a gitfile's relative path climbs out of.
  const auto add = [&](const fs::path& path) {
    // Only a folder the run may write: what it cannot write is as the user left it.
    if (!policy.explain_write(path / "x").allowed) return false;
    UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0) return false;
    outside_.push_back({path, fd.release(), st.st_dev, st.st_ino});
    return true;
  };
  // A .git folder is held by its descriptor (open_git_dir()): its objects
  // are reached through it.
  if (git_dir_ >= 0) {
    objects_ = ".git/objects";
    return;
  }
  struct stat st {};
  UniqueFd git = open_beneath(run_dir_, ".git", O_RDONLY | O_NONBLOCK);
  if (git && ::fstat(git.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    objects_ = ".git/objects";
    return;
  }
  // A gitfile: a workspace's names <repo>/.git/worktrees/NAME, where the
  // run writes its HEAD and index (and, with submodules, their git dirs), and
  // whose commondir names the main repository, whose objects it writes. The
  // gitfile is read-only in the run.
  const auto text = git ? read_small_file(git.get(), 4096) : std::nullopt;
  const auto target = text ? gitfile_target(*text) : std::nullopt;
  if (!target) return;
  const fs::path git_dir = (run_folder_ / *target).lexically_normal();
  if (is_within(git_dir, run_folder_) || !add(git_dir)) return;
  own_git_dir_ = git_dir;
  UniqueFd commondir = open_at(git_dir / "commondir", O_RDONLY);
  std::string common = commondir ? read_small_file(commondir.get(), 4096).value_or("") : "";
  while (!common.empty() && (common.back() == '\n' || common.back() == '\r')) common.pop_back();
  const fs::path objects = (common.empty() ? git_dir : (git_dir / common).lexically_normal()) / "objects";
  if (add(objects)) objects_ = objects;
}

UniqueFd Quarantine::open_at(const fs::path& key, int flags) const {
  if (!key.is_absolute()) return at(key, flags);
  for (const auto& o : outside_)
    if (o.fd >= 0 && is_within(key, o.path)) return open_beneath(o.fd, key.lexically_relative(o.path), flags);
  return UniqueFd();
}

fs::path Quarantine::shown(const fs::path& key) const {
  return key.is_absolute() ? key : run_folder_ / key;
}

void Quarantine::remember(const fs::path& rel, bool keep_original) {
  UniqueFd parent = open_at(rel.parent_path(), O_PATH | O_DIRECTORY);
  struct stat st {};
  Identity id;
  if (parent && ::fstatat(parent.get(), rel.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    id = {true,
          st.st_dev,
          st.st_ino,
          st.st_size,
          static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec,
          S_ISLNK(st.st_mode),
          {}};
  git_start_[rel] = id;
  // A small file's content, to put back if the run changes it (only files a
  // run may write: those of a nested repository, which are not read-only).
  if (keep_original && id.exists && S_ISREG(st.st_mode) && st.st_size <= kMaxKeptOriginal) {
    UniqueFd fd(::openat(parent.get(), rel.filename().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    bool too_big = false;
    if (fd) git_originals_[rel] = {read_small(fd.get(), kMaxKeptOriginal, too_big), st.st_mode & 07777};
    if (too_big) git_originals_.erase(rel);
  }
}

std::string Quarantine::put_back(const fs::path& rel) {
  const auto it = git_originals_.find(rel);
  if (it == git_originals_.end()) return "";
  UniqueFd dir = open_at(rel.parent_path(), O_RDONLY | O_DIRECTORY);
  UniqueFd fd(dir ? ::openat(dir.get(), rel.filename().c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, it->second.mode)
                  : -1);
  const std::string& text = it->second.text;
  if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return "";
  ::fchmod(fd.get(), it->second.mode);
  fd.reset();
  remember(rel);  // the file put back is the one to compare with from now on
  return "the original (as it was when the run started) is put back";
}

bool Quarantine::unchanged(const fs::path& rel) const {
  const auto it = git_start_.find(rel);
  if (it != git_start_.end() && !it->second.exists) return false;
  UniqueFd parent = open_at(rel.parent_path(), O_PATH | O_DIRECTORY);
  struct stat st {};
  if (!parent || ::fstatat(parent.get(), rel.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  // Not looked at when the run started (a repository found only at its end):
  // unchanged when its inode last changed before the run started. No process
  // can set a change time; making, writing, renaming or linking a file sets
  // it to now.
  if (it == git_start_.end())
    return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec < start_ns_;
  const Identity now{true,
                     st.st_dev,
                     st.st_ino,
                     st.st_size,
                     static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec,
                     S_ISLNK(st.st_mode),
                     {}};
  return now == it->second;
}

void Quarantine::remember_git_dir(const fs::path& rel, int depth) {
  for (const char* f : {"config", "config.worktree", "commondir", "info/attributes"}) remember(rel / f);
  if (UniqueFd hooks = open_at(rel / "hooks", O_RDONLY | O_DIRECTORY))
    for (const auto& name : names_in(hooks.get())) remember(rel / "hooks" / name);
  remember_in_progress(rel);
  if (depth >= kMaxGitDepth) return;
  for (const auto& module : module_git_dirs(rel)) remember_git_dir(module, depth + 1);
}

// A rebase, cherry-pick or revert in progress when the run starts (the user
// may ask an agent to resolve its conflicts): as it was, it is left.
void Quarantine::remember_in_progress(const fs::path& git_dir) {
  for (const char* name : {"rebase-merge", "rebase-apply", "sequencer"}) {
    const fs::path rel = git_dir / name;
    remember(rel, false);
    if (UniqueFd dir = open_at(rel, O_RDONLY | O_DIRECTORY)) {
      const auto names = names_in(dir.get());
      for (std::size_t i = 0; i < names.size() && i < kMaxInProgressEntries; ++i)
        remember(rel / names[i], false);
    }
  }
}

void Quarantine::remember_git() {
  struct stat st {};
  // A workspace's own git dir, outside the run folder: its rebase state and
  // its submodules' git dirs.
  if (!own_git_dir_.empty()) remember_git_dir(own_git_dir_, 0);
  for (const auto& path : nested_) {
    UniqueFd nested = at(path / ".git", O_PATH);
    if (nested && ::fstat(nested.get(), &st) == 0 && S_ISDIR(st.st_mode)) remember_git_dir(path / ".git", 1);
  }
  had_git_dir_ = git_dir_ >= 0;
  if (!had_git_dir_) return;
  remember_git_dir(".git", 0);
  if (UniqueFd worktrees = at(".git/worktrees", O_RDONLY | O_DIRECTORY))
    for (const auto& w : names_in(worktrees.get())) {
      const fs::path dir = fs::path(".git/worktrees") / w;
      for (const char* f : {"commondir", "config.worktree", "gitdir"}) remember(dir / f);
      remember_in_progress(dir);
    }
  // Submodules whose git dir lies in their own folder (the old layout) are
  // nested repositories at the paths .gitmodules names.
  if (UniqueFd modules = at(".gitmodules", O_RDONLY)) {
    bool too_big = false;
    bool ok = true;
    for (const auto& e : parse_git_config(read_small(modules.get(), kMaxCheckedFile, too_big), ok)) {
      if (e.key.size() < 5 || e.key.substr(e.key.size() - 5) != ".path" || e.value.empty()) continue;
      const fs::path path = fs::path(e.value).lexically_normal();
      if (path.is_absolute() || path.string().rfind("..", 0) == 0) continue;
      submodule_paths_.push_back(path);
      UniqueFd nested = at(path / ".git", O_PATH);
      if (nested && ::fstat(nested.get(), &st) == 0 && S_ISDIR(st.st_mode))
        remember_git_dir(path / ".git", 1);
    }
  }
}

std::vector<fs::path> Quarantine::watch_dirs() const {
  std::set<fs::path> out;
  if (run_dir_ < 0) return {};
  for (const auto& p : protected_) {
    fs::path deepest;
    fs::path walked;
    for (const auto& part : p.rel.parent_path()) {
      walked /= part;
      UniqueFd fd = at(walked, O_PATH | O_DIRECTORY);
      if (!fd) break;
      deepest = walked;
    }
    out.insert(run_folder_ / deepest);
  }
  return {out.begin(), out.end()};
}

std::optional<Quarantined> Quarantine::move_aside(int parent, const std::string& name, const fs::path& rel,
                                                  const std::string& why, const std::string& when,
                                                  bool may_copy, const struct stat* checked) {
  Quarantined q;
  q.path = shown(rel);
  q.why = why;
  q.when = when;
  q.at = iso_utc_now();
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  const auto same = [&](const struct stat& a) {
    return !checked || (a.st_dev == checked->st_dev && a.st_ino == checked->st_ino);
  };
  if (!same(st)) return std::nullopt;
  q.kind = S_ISDIR(st.st_mode) ? "folder" : S_ISLNK(st.st_mode) ? "link" : "file";
  // Under the record folder, by the path it had (from outside the run
  // folder, by its whole path); a second one gets a suffix.
  const fs::path under = rel.is_absolute() ? fs::path(kOutsideFolder) / rel.relative_path() : rel;
  fs::path dest = record_dir_ / "quarantine" / under;
  std::error_code ec;
  for (int n = 2; fs::exists(fs::symlink_status(dest, ec)) && n < 1000; ++n)
    dest = record_dir_ / "quarantine" / (under.string() + "." + std::to_string(n));
  fs::create_directories(dest.parent_path(), ec);
  for (fs::path d = dest.parent_path(); is_within(d, record_dir_) && d != record_dir_; d = d.parent_path())
    ::chmod(d.c_str(), 0700);
  UniqueFd dest_dir(::open(dest.parent_path().c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dest_dir) {
    q.error = "the record folder " + dest.parent_path().string() + " cannot be made (" + ec.message() + ")";
    return q;
  }
  const std::string dest_name = dest.filename().string();
  if (::renameat(parent, name.c_str(), dest_dir.get(), dest_name.c_str()) == 0) {
    struct stat moved {};
    if (::fstatat(dest_dir.get(), dest_name.c_str(), &moved, AT_SYMLINK_NOFOLLOW) == 0 && !same(moved)) {
      // Swapped in between the look and the move: back where it was, unless
      // something took that name meanwhile (then it stays, recorded).
      if (::renameat2(dest_dir.get(), dest_name.c_str(), parent, name.c_str(), RENAME_NOREPLACE) == 0)
        return std::nullopt;
    }
    q.moved_to = dest;
    return q;
  }
  const int err = errno;
  if (err != EXDEV) {
    q.error = std::string("it cannot be moved (") + std::strerror(err) + ")";
    return q;
  }
  // Another filesystem: copied, then removed. Only when nothing of the run
  // can still be writing to it (paused or ended); else at the run's end.
  if (!may_copy) return std::nullopt;
  UniqueFd writable_dest(::open(dest.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd writable_parent(::openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  CopyCounts counts;
  if (!writable_dest || !writable_parent ||
      !copy_entry(writable_parent.get(), name, writable_dest.get(), dest_name, counts) || counts.skipped) {
    q.error = "it could not be copied into the run's record (another filesystem), so it was left in place";
    remove_entry(writable_dest.get(), dest_name);
    return q;
  }
  if (!remove_entry(writable_parent.get(), name)) {
    q.error = "it was copied into " + dest.string() + " but could not be removed from the run folder";
    return q;
  }
  q.moved_to = dest;
  return q;
}

void Quarantine::sweep_project_file(Protected& p, const std::string& when, bool may_copy,
                                    std::vector<Quarantined>& out) {
  const std::string name = p.rel.filename().string();
  UniqueFd parent = at(p.rel.parent_path(), O_PATH | O_DIRECTORY);
  if (!parent) {
    // A link made on the way to the protected path (`.claude -> elsewhere`):
    // the link is what is moved aside, never what it points to.
    if (!p.parent_ok_at_start) return;
    const auto link = first_link_on_the_way(run_dir_, p.rel.parent_path());
    if (!link) return;  // absent, or not a folder: nothing there for a program to read
    UniqueFd dir = at(link->parent_path(), O_PATH | O_DIRECTORY);
    if (!dir) return;
    if (auto q = move_aside(dir.get(), link->filename().string(), *link,
                            "a link the run made on the way to " + p.rel.string() + ", " + p.reason, when,
                            may_copy))
      out.push_back(std::move(*q));
    return;
  }
  struct stat st {};
  const bool exists = ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (exists && p.start.exists && st.st_dev == p.start.dev && st.st_ino == p.start.ino &&
      S_ISLNK(st.st_mode) == p.start.link) {
    // As it was. A file or folder there was bound read-only for the run; a
    // link was not (no mount point can be a link): a new one may have got
    // the number the old one freed, so it must also name the same target.
    if (!p.start.link) return;
    char target[PATH_MAX] = {};
    const ssize_t n = ::readlinkat(parent.get(), name.c_str(), target, sizeof target - 1);
    if (n >= 0 && std::string(target, static_cast<std::size_t>(n)) == p.start.link_target &&
        static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec == p.start.ctime_ns)
      return;
  }
  std::string restored;
  if (exists) {
    if (S_ISDIR(st.st_mode)) {
      UniqueFd dir(::openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (dir && holds_only_folders(dir.get())) return;  // empty folders: nothing for a program to run
    }
    auto q = move_aside(parent.get(), name, p.rel,
                        (p.start.exists ? "it replaced what was there; " : "made by the run; ") + p.reason,
                        when, may_copy);
    if (!q) return;
    out.push_back(std::move(*q));
    if (!out.back().error.empty()) return;
  }
  // A link that was there before (links are not mount points: the run could
  // remove or replace it) is put back as it was.
  if (p.start.exists && p.start.link) {
    if (::symlinkat(p.start.link_target.c_str(), parent.get(), name.c_str()) == 0) {
      // The link put back is the one to compare with from now on.
      if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        p.start.dev = st.st_dev;
        p.start.ino = st.st_ino;
        p.start.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
      }
      restored = "the link " + p.rel.string() + " -> " + p.start.link_target + " that was there is put back";
      if (exists) {
        out.back().restored = restored;
      } else {
        Quarantined q;
        q.path = run_folder_ / p.rel;
        q.kind = "link";
        q.why = "the run removed it; " + p.reason;
        q.when = when;
        q.at = iso_utc_now();
        q.restored = restored;
        q.contents = "nothing (it was removed)";
        out.push_back(std::move(q));
      }
    }
  }
}

void Quarantine::check_git_file(const fs::path& rel, const std::string& why_if_unsafe,
                                const std::string& kind, const std::string& when, bool may_copy,
                                std::vector<Quarantined>& out) {
  if (unchanged(rel)) return;
  UniqueFd parent = open_at(rel.parent_path(), O_PATH | O_DIRECTORY);
  if (!parent) return;
  const std::string name = rel.filename().string();
  struct stat st {};
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  std::string why;
  if (S_ISLNK(st.st_mode)) {
    why = "a link in a git dir where git reads a file (" + why_if_unsafe + ")";
  } else if (kind == "hook") {
    if (name.size() > 7 && name.substr(name.size() - 7) == ".sample") return;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return;
    why = why_if_unsafe;
  } else if (kind == "commondir") {
    why = why_if_unsafe;
  } else {
    // Never opened unless a plain file: opening a FIFO the run left would
    // wait for a writer that never comes.
    UniqueFd fd(S_ISREG(st.st_mode)
                    ? ::openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                    : -1);
    if (!fd) {
      why = "not a file git can read safely (" + why_if_unsafe + ")";
    } else {
      bool too_big = false;
      const std::string text = read_small(fd.get(), kMaxCheckedFile, too_big);
      std::vector<std::string> found;
      std::string t = text;
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == '/')) t.pop_back();
      if (too_big) {
        found.push_back("too large to check");
      } else if (kind == "config") {
        found = unsafe_git_config(text);
      } else if (kind == "attributes") {
        found = unsafe_git_attributes(text);
      } else if (kind == "worktree-commondir") {
        if (t != "../..")
          found.push_back("it names " + first_lines(t, 1, 200) + ", not the repository's own git dir");
      } else if (kind == "worktree-gitdir") {
        // Where the worktree is: `git worktree remove`, `prune` and `repair`
        // act there. One the run made lies in the run folder.
        fs::path named(t);
        if (named.is_relative()) named = (shown(rel.parent_path()) / named).lexically_normal();
        if (t.empty() || !is_within(named, run_folder_))
          found.push_back("it names " + first_lines(t, 1, 200) + ", a folder outside the run folder");
      }
      if (found.empty()) return;
      std::string list;
      for (std::size_t i = 0; i < found.size() && i < 6; ++i) list += (i ? ", " : "") + found[i];
      if (found.size() > 6) list += ", ...";
      why = why_if_unsafe + ": " + list;
    }
  }
  if (auto q = move_aside(parent.get(), name, rel, why, when, may_copy)) {
    if (!q->moved_to.empty() && q->error.empty()) q->restored = put_back(rel);
    out.push_back(std::move(*q));
  }
}

void Quarantine::check_git_dir(const fs::path& rel, const std::string& what, const std::string& when,
                               bool may_copy, std::vector<Quarantined>& out, int depth) {
  // Once a sweep: a git dir is reached from its repository, a gitfile, a
  // gitlink, a worktree's commondir.
  if (!checked_.insert(rel.lexically_normal()).second || !open_at(rel, O_PATH | O_DIRECTORY)) return;
  check_git_file(rel / "config", what + "'s config names a program git would run", "config", when, may_copy,
                 out);
  check_git_file(rel / "config.worktree", what + "'s worktree config names a program git would run", "config",
                 when, may_copy, out);
  // A worktree's git dir (<git dir>/worktrees/NAME) names the repository's
  // own with "../.." (git worktree add writes it) and where the worktree is.
  const bool worktree = rel.parent_path().filename() == "worktrees";
  if (worktree) {
    check_git_file(rel / "commondir", what + "'s commondir", "worktree-commondir", when, may_copy, out);
    check_git_file(rel / "gitdir", what + "'s gitdir (where its worktree is)", "worktree-gitdir", when,
                   may_copy, out);
  } else {
    check_git_file(rel / "commondir",
                   what + " got a commondir: git would take its config and hooks from the git dir it names",
                   "commondir", when, may_copy, out);
  }
  check_git_file(rel / "info/attributes", what + "'s attributes select a driver git runs", "attributes", when,
                 may_copy, out);
  if (UniqueFd hooks = open_at(rel / "hooks", O_RDONLY | O_DIRECTORY))
    for (const auto& name : names_in(hooks.get()))
      check_git_file(rel / "hooks" / name, "a hook git runs as you, in " + what, "hook", when, may_copy, out);
  check_in_progress(rel, what, when, may_copy, out);
  if (depth >= kMaxGitDepth) return;
  // The repository a worktree's git dir belongs to: git takes its config and
  // hooks from there (a planted `x/worktrees/y` would name `x`).
  if (worktree && open_at(rel / "commondir", O_PATH))
    check_git_dir(rel.parent_path().parent_path(), "the repository of " + what, when, may_copy, out,
                  depth + 1);
  for (const auto& module : module_git_dirs(rel))
    check_git_dir(module, "the submodule git dir " + shown(module).string(), when, may_copy, out, depth + 1);
  if (UniqueFd worktrees = open_at(rel / "worktrees", O_RDONLY | O_DIRECTORY))
    for (const auto& w : names_in(worktrees.get()))
      check_git_dir(rel / "worktrees" / w, "the worktree " + w + "'s git dir", when, may_copy, out,
                    depth + 1);
}

// A rebase, cherry-pick or revert the run started or changed, in the git dir
// `git_dir`: its todo list can name commands (`exec make`), which the user's
// `git rebase --continue` (`cherry-pick --continue`) would run as them. The
// folder is moved aside whole. The branch being rebased is untouched (git
// moves it when a rebase ends), so nothing of the user's is lost; HEAD stays
// detached where the rebase stopped.
void Quarantine::check_in_progress(const fs::path& git_dir, const std::string& what, const std::string& when,
                                   bool may_copy, std::vector<Quarantined>& out) {
  UniqueFd parent = open_at(git_dir, O_PATH | O_DIRECTORY);
  if (!parent) return;
  for (const char* name : {"rebase-merge", "rebase-apply", "sequencer"}) {
    const fs::path rel = git_dir / name;
    struct stat st {};
    if (::fstatat(parent.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    bool changed = !unchanged(rel);
    std::string branch;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd dir(::openat(parent.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      const auto names = dir ? names_in(dir.get()) : std::vector<std::string>{};
      // What cannot be looked through is not trusted.
      if (!dir || names.size() > kMaxInProgressEntries) changed = true;
      for (std::size_t i = 0; !changed && i < names.size(); ++i) changed = !unchanged(rel / names[i]);
      if (changed && dir) {
        UniqueFd head(::openat(dir.get(), "head-name", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        std::string text = head ? read_small_file(head.get(), 1024).value_or("") : "";
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        if (text.rfind("refs/heads/", 0) == 0) branch = first_lines(text.substr(11), 1, 200);
      }
    }
    if (!changed) continue;
    std::string why =
        std::string(name) == "sequencer"
            ? "a cherry-pick or revert in progress that the run started or changed, in " + what +
                  ": `git cherry-pick --continue` (or `git revert --continue`) would run the commands its "
                  "list "
                  "names (exec) as you"
            : "a rebase in progress that the run started or changed, in " + what +
                  ": `git rebase --continue` would run the commands its todo list names (exec) as you";
    if (!branch.empty())
      why += "; the branch " + branch +
             " is as it was before the rebase (git moves it only when a rebase ends): `git checkout " +
             branch + "` leaves the detached HEAD where the rebase stopped";
    if (auto q = move_aside(parent.get(), name, rel, why, when, may_copy)) out.push_back(std::move(*q));
  }
}

// The git dir a gitfile (or a link named .git) in the folder `dir` names, as
// a key: in the run folder, reached without a link, or in a git dir of the
// run's outside it (a workspace's); nullopt when it lies anywhere else, is
// reached through a link, or is no folder. A relative path is resolved from
// `dir` as git does, by the kernel, beneath the run folder; one that climbs
// out of it (a workspace's submodule names <repo>/.git/worktrees/NAME/modules/
// lib) may only climb, then descend: a link after a step down would make a
// later `..` lead elsewhere than the text says.
std::optional<fs::path> Quarantine::git_dir_named(const fs::path& dir, const std::string& target) const {
  const fs::path t(target);
  bool down = false, up_after_down = false, up = false;
  for (const auto& part : t.relative_path()) {
    if (part == "..") {
      up = true;
      up_after_down = up_after_down || down;
    } else if (!part.empty() && part != ".") {
      down = true;
    }
  }
  fs::path abs;
  if (t.is_relative()) {
    if (open_beneath(run_dir_, dir / t, O_PATH | O_DIRECTORY)) {
      const fs::path rel = (dir / t).lexically_normal();
      if (rel.empty() || rel == ".") return std::nullopt;  // the run folder itself is no git dir of it
      return rel;
    }
    if (up_after_down) return std::nullopt;
    abs = (run_folder_ / dir / t).lexically_normal();
  } else {
    if (up) return std::nullopt;
    abs = t.lexically_normal();
  }
  if (is_within(abs, run_folder_)) {
    const fs::path rel = abs.lexically_relative(run_folder_);
    if (rel.empty() || rel == "." || !open_beneath(run_dir_, rel, O_PATH | O_DIRECTORY)) return std::nullopt;
    return rel;
  }
  for (const auto& o : outside_)
    if (is_within(abs, o.path) && open_at(abs, O_PATH | O_DIRECTORY)) return abs;
  return std::nullopt;
}

// The `.git` of the folder `dir` ("" the run folder itself), found by the
// walk or named by a gitlink of the index. A folder is a nested repository's
// git dir. A gitfile (`gitdir: PATH`) or a link is what git follows to the
// git dir whose config and hooks it then uses: one the run made or rewrote
// that names a git dir outside the run folder, or one that cannot be read, is
// moved aside; the git dir it names is checked like any, and when that held
// what would run a program, the gitfile the run made goes with it.
void Quarantine::check_dot_git(const fs::path& dir, const std::string& when, bool may_copy,
                               std::vector<Quarantined>& out) {
  const fs::path rel = dir / ".git";
  UniqueFd parent = open_beneath(run_dir_, dir, O_PATH | O_DIRECTORY);
  struct stat st {};
  if (!parent || ::fstatat(parent.get(), ".git", &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  const std::string where = dir.empty() ? "the run folder" : dir.string();
  if (S_ISDIR(st.st_mode)) {
    if (!dir.empty()) check_git_dir(rel, "the nested repository " + dir.string(), when, may_copy, out, 1);
    return;
  }
  const bool made = !unchanged(rel);
  const char* kind = S_ISLNK(st.st_mode) ? "a link" : "a gitfile";
  std::optional<std::string> target;
  if (S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX] = {};
    const ssize_t n = ::readlinkat(parent.get(), ".git", buf, sizeof buf - 1);
    if (n > 0) target = std::string(buf, static_cast<std::size_t>(n));
  } else if (S_ISREG(st.st_mode)) {
    UniqueFd fd(::openat(parent.get(), ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (auto text = fd ? read_small_file(fd.get(), 4096) : std::nullopt) target = gitfile_target(*text);
  }
  std::string why;
  if (!target) {
    // git refuses such a .git, but what cannot be checked is not trusted.
    if (made)
      why = "a .git in " + where + " that is neither a folder nor a gitfile that could be read and checked";
  } else if (const auto git_dir = git_dir_named(dir, *target)) {
    const std::size_t before = out.size();
    // Named as the user reads them: relative to the run folder, or whole outside it.
    check_git_dir(*git_dir, rel.string() + "'s git dir " + git_dir->string(), when, may_copy, out, 1);
    if (made && out.size() != before)
      why = std::string(kind) + " named .git in " + where + ", naming the git dir " +
            shown(*git_dir).string() + ", from which what would run a program was moved aside";
  } else if (made) {
    why = std::string(kind) + " named .git in " + where + " naming " + first_lines(*target, 1, 200) +
          ", which lies outside the run folder, is reached through a link or is no folder, so it cannot be "
          "checked: git there (and `git status` in the repository around it, through a gitlink) would take "
          "its config and hooks from that git dir, and change it";
  }
  if (why.empty()) return;
  if (auto q = move_aside(parent.get(), ".git", rel, why, when, may_copy, &st)) out.push_back(std::move(*q));
}

// The gitlinks of the index in `git_dir` (the folders `git status` recurses
// into), each folder's .git checked by check_dot_git. A walk that looked
// everywhere found every .git of the run folder, those of gitlinked folders
// with them (git follows no link to a gitlinked folder, nor does the walk);
// when it stopped short, the index names the folders git reaches that it
// did not look into. (libgit2 reads the index: loading it and its TLS
// set-up cost milliseconds a run would otherwise pay for nothing.)
void Quarantine::check_gitlinks(const fs::path& git_dir, bool walk_complete, const std::string& when,
                                bool may_copy, std::vector<Quarantined>& out) {
  if (walk_complete) return;
  const fs::path index = git_dir / "index";
  // Before the stat, as for a folder the walk reads (walk_cache.hpp).
  const std::int64_t read_ns = change_clock_now_ns();
  struct stat st {};
  UniqueFd fd = open_at(index, O_RDONLY | O_NONBLOCK);
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  // The index of a run folder whose walk never completes (a large
  // node_modules) is read once, not at each run: the cache keeps its
  // gitlinks while the file is the same, unchanged.
  std::vector<std::string> links;
  if (const auto* known = walk_cache_.gitlinks(st)) {
    links = *known;
  } else {
    auto read = index_gitlinks(fd.get());
    if (!read) return;  // git cannot read it either: it recurses nowhere
    links = std::move(read).value();
    walk_cache_.set_gitlinks(st, read_ns, links);
    (void)walk_cache_.save();
  }
  for (const auto& link : links) {
    const fs::path path = fs::path(link).lexically_normal();
    if (path.empty() || path.is_absolute() || *path.begin() == ".." || *path.begin() == ".") continue;
    check_dot_git(path, when, may_copy, out);
  }
}

// Objects the run wrote into its repository's object store (".git/objects",
// or a workspace's main repository's). git reads a loose object by its name
// and a packed one through its pack's index, looking in packs first, and
// checks neither against what it holds when it checks out: an object the run
// rewrote under the name of one of yours (chmod, then write: the folder does
// not change), or a pack giving one of your objects other contents, would be
// what your next checkout of a branch of yours writes. Each loose object and
// pack made or changed since the run started is read through and hashed;
// what does not hold what its name says is moved aside. A pack that cannot
// be read through (too large) is said, not moved: git's own `gc` makes packs.
void Quarantine::check_objects(const fs::path& objects, const std::string& when, bool may_copy,
                               std::vector<Quarantined>& out) {
  UniqueFd dir = open_at(objects, O_RDONLY | O_DIRECTORY);
  if (!dir) {
    // A link the run put in place of the objects folder: git would read its objects wherever it leads.
    UniqueFd parent = open_at(objects.parent_path(), O_PATH | O_DIRECTORY);
    struct stat st {};
    if (parent && ::fstatat(parent.get(), "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
        !unchanged(objects))
      if (auto q = move_aside(parent.get(), "objects", objects,
                              "a link (or file) in place of the repository's objects folder: git would read "
                              "your history's objects from wherever it leads",
                              when, may_copy))
        out.push_back(std::move(*q));
    return;
  }
  const auto hex = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  };
  const auto made_since_start = [&](const struct stat& st) { return ctime_ns_of(st) >= start_ns_; };
  std::size_t loose = 0;
  std::uint64_t bytes = 0;
  std::size_t unverified = 0;
  const auto move = [&](int parent, const std::string& name, const fs::path& rel, const std::string& why) {
    if (auto q = move_aside(parent, name, rel, why, when, may_copy)) out.push_back(std::move(*q));
  };
  for (const auto& fan : names_in(dir.get())) {
    if (fan.size() != 2 || !hex(fan)) continue;
    struct stat st {};
    if (::fstatat(dir.get(), fan.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      if (made_since_start(st))
        move(dir.get(), fan, objects / fan,
             "a link (or file) in place of a folder of loose objects: git would read those objects from "
             "wherever it leads");
      continue;
    }
    UniqueFd sub(::openat(dir.get(), fan.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub) continue;
    for (const auto& file : names_in(sub.get())) {
      if (file.size() != 38 || !hex(file)) continue;  // git's temporary files: not read as objects
      if (::fstatat(sub.get(), file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !made_since_start(st))
        continue;
      const fs::path rel = objects / fan / file;
      if (!S_ISREG(st.st_mode)) {
        move(sub.get(), file, rel, "a link (or other file) in place of an object: git would read it through");
        continue;
      }
      if (loose >= kMaxLooseObjects || bytes > kMaxObjectBytes) {
        ++unverified;
        continue;
      }
      ++loose;
      // Counted as inflated: what reading it through costs.
      const ObjectCheck c = check_loose_object(dir.get(), fan + file, kMaxObjectBytes - bytes);
      bytes += std::max(static_cast<std::uint64_t>(st.st_size), c.read);
      if (c.too_large)
        ++unverified;
      else if (!c.mismatched.empty())
        move(sub.get(), file, rel,
             "an object whose contents are not what its name says (" + c.mismatched.front() +
                 "): git would use it as the object of that name without checking, when you check out a "
                 "branch of yours");
      else if (!c.checked)
        move(sub.get(), file, rel, "an object the run wrote that cannot be read through (" + c.problem + ")");
    }
  }
  if (UniqueFd pack = open_at(objects / "pack", O_RDONLY | O_DIRECTORY)) {
    for (const auto& idx : names_in(pack.get())) {
      if (!idx.ends_with(".idx")) continue;
      const std::string base = idx.substr(0, idx.size() - 4);
      struct stat ist {
      }, pst{};
      if (::fstatat(pack.get(), idx.c_str(), &ist, AT_SYMLINK_NOFOLLOW) != 0 ||
          ::fstatat(pack.get(), (base + ".pack").c_str(), &pst, AT_SYMLINK_NOFOLLOW) != 0 ||
          (!made_since_start(ist) && !made_since_start(pst)))
        continue;
      std::string why;
      if (!S_ISREG(ist.st_mode) || !S_ISREG(pst.st_mode)) {
        why = "a pack whose files are links (or not files): git would read its objects through them";
      } else if (bytes + static_cast<std::uint64_t>(pst.st_size) > kMaxObjectBytes) {
        ++unverified;
        continue;
      } else {
        bytes += static_cast<std::uint64_t>(pst.st_size);
        const ObjectCheck c = check_pack(pack.get(), idx, kMaxObjectBytes);
        if (!c.mismatched.empty())
          why = "a pack holding objects whose contents are not what their names say (" +
                c.mismatched.front() +
                "): git looks in packs first, and would use them as the objects of those names";
        else if (!c.checked)
          ++unverified;
      }
      if (why.empty()) continue;
      for (const char* ext : {".idx", ".pack", ".rev", ".bitmap", ".keep", ".mtimes", ".promisor"})
        if (::fstatat(pack.get(), (base + ext).c_str(), &pst, AT_SYMLINK_NOFOLLOW) == 0)
          move(pack.get(), base + ext, objects / "pack" / (base + ext), why);
    }
  }
  if (unverified > 0) {
    Quarantined q;
    q.path = shown(objects);
    q.kind = "unverified";
    q.when = when;
    q.at = iso_utc_now();
    q.why = "a sweep reads at most " + std::to_string(kMaxLooseObjects) + " loose objects and " +
            std::to_string(kMaxObjectBytes >> 20) + " MiB of objects";
    q.contents = std::to_string(unverified) + " object file" + (unverified == 1 ? "" : "s") + " or pack" +
                 (unverified == 1 ? "" : "s");
    out.push_back(std::move(q));
  }
}

namespace {

// The object format of the repository whose config is `config`: libgit2
// (what the objects are read with) knows SHA-1 only.
bool sha1_repository(int config_fd) {
  bool too_big = false;
  bool ok = true;
  for (const auto& e : parse_git_config(read_small(config_fd, kMaxCheckedFile, too_big), ok))
    if (e.key == "extensions.objectformat" && e.value != "sha1") return false;
  return !too_big;
}

}  // namespace

std::vector<int> Quarantine::git_dirs_to_check(UniqueFd& named) const {
  std::vector<int> out;
  if (git_dir_ >= 0) out.push_back(git_dir_);
  for (const auto& g : appeared_git_) out.push_back(g.get());
  // What the name reaches now, if it is another folder (a process outside
  // put it there): the user's git would use it.
  named = open_beneath(run_dir_, ".git", O_PATH);
  struct stat st {};
  if (!named || ::fstat(named.get(), &st) != 0 || !S_ISDIR(st.st_mode)) return out;
  for (const int fd : out) {
    struct stat seen {};
    if (::fstat(fd, &seen) == 0 && seen.st_dev == st.st_dev && seen.st_ino == st.st_ino) return out;
  }
  out.push_back(named.get());
  return out;
}

void Quarantine::git_event() {
  std::lock_guard lock(mu_);
  if (run_dir_ < 0 || git_dir_ >= 0) return;
  git_moved_ = true;
  note_appeared_git();
}

bool Quarantine::note_appeared_git() {
  if (git_dir_ >= 0 || appeared_git_.size() >= 8) return false;
  UniqueFd git = open_beneath(run_dir_, ".git", O_PATH);
  if (!git && errno != ENOENT) git_moved_ = true;  // a link (O_NOFOLLOW), or a lookup a rename raced
  struct stat st {};
  if (!git || ::fstat(git.get(), &st) != 0) return false;
  // A gitfile (or link) the run started with, as it was (a workspace's .git
  // names its git dir outside): nothing came or went.
  if (!S_ISDIR(st.st_mode) && unchanged(".git")) return false;
  git_moved_ = true;
  if (!S_ISDIR(st.st_mode)) return false;
  for (const auto& g : appeared_git_) {
    struct stat seen {};
    if (::fstat(g.get(), &seen) == 0 && seen.st_dev == st.st_dev && seen.st_ino == st.st_ino) return true;
  }
  appeared_git_.push_back(std::move(git));
  return true;
}

void Quarantine::sweep_git(const std::string& when, bool may_copy, std::vector<Quarantined>& out) {
  checked_.clear();
  // A run that started without a .git folder, in a folder where something
  // came and went at .git (a process outside moving a repository in and out
  // as the run went on): the name is looked at for a moment more, until it
  // shows a folder to check, rather than once at an instant it may not.
  for (int look = 0; git_moved_ && appeared_git_.empty() && look < 200 && !note_appeared_git(); ++look)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  struct stat st {};
  std::vector<fs::path> paths = nested_;
  UniqueFd named;
  const std::vector<int> gits = git_dirs_to_check(named);
  for (const int git : gits) {
    // Each reached through its descriptor (at() resolves ".git/..." from
    // checking_git_), each checked whole: what one held is no reason to
    // skip the same names in another.
    checking_git_ = git;
    std::erase_if(checked_, [](const fs::path& c) { return !c.empty() && *c.begin() == ".git"; });
    // The repository's own config and hooks are read-only in the run; what it
    // may write in .git (objects, refs, submodules' and worktrees' git dirs,
    // a rebase's state) is checked for what would make git run a program.
    const std::string what = git == git_dir_ ? "the repository"
                             : had_git_dir_  ? "the folder now at .git (not the one the run started with)"
                                             : "the repository the run made";
    check_git_dir(".git", what, when, may_copy, out, 0);
    checking_git_ = -1;
  }
  const bool git_folder = !gits.empty();
  if (git_folder) {
    paths.insert(paths.end(), submodule_paths_.begin(), submodule_paths_.end());
    if (UniqueFd modules = at(".gitmodules", O_RDONLY | O_NONBLOCK)) {
      bool too_big = false;
      bool ok = true;
      if (::fstat(modules.get(), &st) == 0 && S_ISREG(st.st_mode))
        for (const auto& e : parse_git_config(read_small(modules.get(), kMaxCheckedFile, too_big), ok))
          if (e.key.size() > 5 && e.key.substr(e.key.size() - 5) == ".path" && !e.value.empty())
            paths.push_back(fs::path(e.value).lexically_normal());
    }
  }
  // Every repository in the run folder now, wherever the run made or cloned
  // it (`git init vendor/a/b/x`), and every gitfile: what was not looked at
  // when the run started is judged by its change time (unchanged()).
  const WalkFound walk = find_repositories(run_dir_, kEndWalk, walk_cache_);
  // Nothing of the run can change the run folder now (paused or ended): what
  // the walk saw is what the next run's walks start from. A cache that
  // cannot be written costs the next run reads, nothing else.
  (void)walk_cache_.save();
  paths.insert(paths.end(), walk.repositories.begin(), walk.repositories.end());
  paths.insert(paths.end(), walk.gitfiles.begin(), walk.gitfiles.end());
  if (auto report = unvisited_report(walk, run_folder_, when)) out.push_back(std::move(*report));
  if (git_moved_ && appeared_git_.empty()) {
    Quarantined q;
    q.kind = "git-came-and-went";
    q.path = run_folder_ / ".git";
    q.when = when;
    q.at = iso_utc_now();
    out.push_back(std::move(q));
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  for (const auto& path : paths) {
    if (path.is_absolute() || path.string().rfind("..", 0) == 0) continue;
    check_dot_git(path, when, may_copy, out);
  }
  const bool walk_complete = walk.unvisited.empty() && walk.too_deep.empty();
  if (git_folder)
    check_gitlinks(".git", walk_complete, when, may_copy, out);
  else if (!own_git_dir_.empty())
    check_gitlinks(own_git_dir_, walk_complete, when, may_copy, out);
  // The objects of the repository the run found (one it made holds nothing of the user's).
  if (objects_.empty()) return;
  const fs::path common = objects_.parent_path();
  UniqueFd config = open_at(common / "config", O_RDONLY | O_NONBLOCK);
  if (!config || (::fstat(config.get(), &st) == 0 && S_ISREG(st.st_mode) && sha1_repository(config.get())))
    check_objects(objects_, when, may_copy, out);
}

std::vector<Quarantined> Quarantine::sweep(const std::string& when, bool git, bool may_copy) {
  std::lock_guard lock(mu_);
  std::vector<Quarantined> out;
  if (run_dir_ < 0) return out;
  note_appeared_git();
  for (auto& p : protected_) sweep_project_file(p, when, may_copy, out);
  if (git) sweep_git(when, may_copy, out);
  for (auto& q : out) {
    if (q.kind == "unvisited" || q.kind == "unverified" || q.kind == "git-came-and-went")
      continue;  // said, but nothing was moved
    if (!q.moved_to.empty()) q.contents = describe_contents(q.moved_to);
    moved_.push_back(q);
  }
  return out;
}

std::vector<Quarantined> Quarantine::moved() const {
  std::lock_guard lock(mu_);
  std::vector<Quarantined> out = moved_;
  for (auto& q : out)
    if (!q.moved_to.empty() && q.contents.empty()) q.contents = describe_contents(q.moved_to);
  return out;
}

}  // namespace px::protect

namespace px::protect {

namespace {

nlohmann::json identity_json(bool exists, dev_t dev, ino_t ino, off_t size, std::int64_t ctime_ns, bool link,
                             const std::string& target) {
  return nlohmann::json::array({exists, static_cast<std::uint64_t>(dev), static_cast<std::uint64_t>(ino),
                                static_cast<std::int64_t>(size), ctime_ns, link, target});
}

}  // namespace

std::vector<std::uint8_t> Quarantine::state(bool kept_files) const {
  std::lock_guard lock(mu_);
  auto id = [](const Identity& i) {
    return identity_json(i.exists, i.dev, i.ino, i.size, i.ctime_ns, i.link, i.link_target);
  };
  nlohmann::json j;
  j["run_folder"] = run_folder_.string();
  j["record_dir"] = record_dir_.string();
  j["had_git_dir"] = had_git_dir_;
  j["start_ns"] = start_ns_;
  j["walk_cache"] = walk_cache_.file().parent_path().string();
  for (const auto& p : protected_)
    j["protected"].push_back({p.rel.string(), p.reason, id(p.start), p.parent_ok_at_start});
  for (const auto& [rel, i] : git_start_) j["git_start"].push_back({rel.string(), id(i)});
  for (const auto& path : submodule_paths_) j["submodules"].push_back(path.string());
  for (const auto& path : nested_) j["nested"].push_back(path.string());
  for (const auto& o : outside_)
    j["outside"].push_back(
        {o.path.string(), static_cast<std::uint64_t>(o.dev), static_cast<std::uint64_t>(o.ino)});
  j["own_git_dir"] = own_git_dir_.string();
  j["objects"] = objects_.string();
  if (kept_files)
    for (const auto& [rel, o] : git_originals_)
      j["originals"].push_back(
          {rel.string(), nlohmann::json::binary(std::vector<std::uint8_t>(o.text.begin(), o.text.end())),
           o.mode});
  for (const auto& q : moved_) j["moved"].push_back(to_json(q));
  return nlohmann::json::to_cbor(j);
}

Result<std::unique_ptr<Quarantine>> Quarantine::restore(const std::vector<std::uint8_t>& bytes,
                                                        UniqueFd run_dir) {
  if (!run_dir) return Error::invalid("the run folder's descriptor is missing from the quarantine's state");
  std::unique_ptr<Quarantine> q(new Quarantine());
  std::string walk_cache_dir;
  try {
    const nlohmann::json j = nlohmann::json::from_cbor(bytes);
    auto id = [](const nlohmann::json& a) {
      Identity i;
      i.exists = a.at(0).get<bool>();
      i.dev = static_cast<dev_t>(a.at(1).get<std::uint64_t>());
      i.ino = static_cast<ino_t>(a.at(2).get<std::uint64_t>());
      i.size = static_cast<off_t>(a.at(3).get<std::int64_t>());
      i.ctime_ns = a.at(4).get<std::int64_t>();
      i.link = a.at(5).get<bool>();
      i.link_target = a.at(6).get<std::string>();
      return i;
    };
    q->run_folder_ = j.at("run_folder").get<std::string>();
    q->record_dir_ = j.at("record_dir").get<std::string>();
    q->had_git_dir_ = j.at("had_git_dir").get<bool>();
    q->start_ns_ = j.at("start_ns").get<std::int64_t>();
    walk_cache_dir = j.value("walk_cache", "");
    for (const auto& p : j.value("protected", nlohmann::json::array()))
      q->protected_.push_back(
          {p.at(0).get<std::string>(), p.at(1).get<std::string>(), id(p.at(2)), p.at(3).get<bool>()});
    for (const auto& g : j.value("git_start", nlohmann::json::array()))
      q->git_start_[g.at(0).get<std::string>()] = id(g.at(1));
    for (const auto& path : j.value("submodules", nlohmann::json::array()))
      q->submodule_paths_.push_back(path.get<std::string>());
    for (const auto& path : j.value("nested", nlohmann::json::array()))
      q->nested_.push_back(path.get<std::string>());
    for (const auto& o : j.value("outside", nlohmann::json::array()))
      q->outside_.push_back({o.at(0).get<std::string>(), -1, static_cast<dev_t>(o.at(1).get<std::uint64_t>()),
                             static_cast<ino_t>(o.at(2).get<std::uint64_t>())});
    q->own_git_dir_ = j.value("own_git_dir", "");
    q->objects_ = j.value("objects", "");
    for (const auto& o : j.value("originals", nlohmann::json::array())) {
      const auto& bin = o.at(1).get_binary();
      q->git_originals_[o.at(0).get<std::string>()] = {std::string(bin.begin(), bin.end()),
                                                       o.at(2).get<mode_t>()};
    }
    for (const auto& m : j.value("moved", nlohmann::json::array()))
      q->moved_.push_back(Quarantined::from_json(m));
  } catch (const nlohmann::json::exception& e) {
    return Error::invalid(std::string("the quarantine's state cannot be read: ") + e.what());
  }
  q->run_dir_ = run_dir.release();
  // A folder outside the run folder, opened again by its path: only if it is
  // the same folder (device and inode) as when the run started. The run
  // cannot rename it (it may write in it, not in the folder holding it).
  for (auto& o : q->outside_) {
    struct stat st {};
    UniqueFd fd(::open(o.path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd && ::fstat(fd.get(), &st) == 0 && st.st_dev == o.dev && st.st_ino == o.ino) o.fd = fd.release();
  }
  q->open_git_dir();
  // Not the file the dead supervisor's walks read: nothing says it is still
  // the one the run could not reach. This walk reads every folder (within
  // its bounds) and leaves what it saw for the next run.
  if (!walk_cache_dir.empty()) q->walk_cache_ = WalkCache::fresh(walk_cache_dir, q->run_folder_, q->run_dir_);
  return q;
}

}  // namespace px::protect
