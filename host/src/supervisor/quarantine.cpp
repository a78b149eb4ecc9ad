#include "supervisor/quarantine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <set>
#include <string_view>

#include "common/clock.hpp"
#include "common/git_files.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/tree_copy.hpp"
#include "common/unique_fd.hpp"
#include "common/beneath.hpp"
#include "supervisor/repository_walk.hpp"

namespace px::supervisor {

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

// The submodules' git dirs in the git dir `rel`: modules are named by their
// path, which may hold '/', so a folder with a HEAD is a git dir and any
// other is a step of a name.
std::vector<fs::path> module_git_dirs(int run_dir, const fs::path& rel) {
  std::vector<fs::path> out;
  std::vector<std::pair<fs::path, int>> pending{{rel / "modules", 0}};
  while (!pending.empty()) {
    auto [dir, steps] = pending.back();
    pending.pop_back();
    UniqueFd fd = open_beneath(run_dir, dir, O_RDONLY | O_DIRECTORY);
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

nlohmann::json to_json(const Quarantined& q) {
  nlohmann::json j{{"path", q.path.string()},        {"kind", q.kind}, {"why", q.why},
                   {"contents", q.contents},         {"when", q.when}, {"at", q.at},
                   {"moved_to", q.moved_to.string()}};
  if (!q.restored.empty()) j["restored"] = q.restored;
  if (!q.error.empty()) j["error"] = q.error;
  return j;
}

Quarantined quarantined_from_json(const nlohmann::json& j) {
  Quarantined q;
  q.path = j.value("path", "");
  q.kind = j.value("kind", "");
  q.why = j.value("why", "");
  q.contents = j.value("contents", "");
  q.when = j.value("when", "");
  q.at = j.value("at", "");
  q.moved_to = j.value("moved_to", "");
  q.restored = j.value("restored", "");
  q.error = j.value("error", "");
  return q;
}

std::string describe(const Quarantined& q, const fs::path& run_folder) {
  if (q.kind == "unvisited")
    return "not looked into for repositories the run made " + q.when + ": " + q.contents + " (" + q.why +
           "). A repository the run made there was not checked: git would run its hooks and config as you. "
           "Look before you run git in them";
  const std::string rel = q.path.lexically_relative(run_folder).string();
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
  for (const auto* r : policy.project_files()) {
    Protected p;
    p.rel = r->path.lexically_relative(run_folder_);
    p.reason = r->reason;
    UniqueFd parent = open_beneath(run_dir_, p.rel.parent_path(), O_PATH | O_DIRECTORY);
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
  remember_git();
}

Quarantine::~Quarantine() {
  if (run_dir_ >= 0) ::close(run_dir_);
}

void Quarantine::remember(const fs::path& rel) {
  UniqueFd parent = open_beneath(run_dir_, rel.parent_path(), O_PATH | O_DIRECTORY);
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
  if (id.exists && S_ISREG(st.st_mode) && st.st_size <= kMaxKeptOriginal) {
    UniqueFd fd(::openat(parent.get(), rel.filename().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    bool too_big = false;
    if (fd) git_originals_[rel] = {read_small(fd.get(), kMaxKeptOriginal, too_big), st.st_mode & 07777};
    if (too_big) git_originals_.erase(rel);
  }
}

std::string Quarantine::put_back(const fs::path& rel) {
  const auto it = git_originals_.find(rel);
  if (it == git_originals_.end()) return "";
  UniqueFd dir = open_beneath(run_dir_, rel.parent_path(), O_RDONLY | O_DIRECTORY);
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
  UniqueFd parent = open_beneath(run_dir_, rel.parent_path(), O_PATH | O_DIRECTORY);
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
  if (UniqueFd hooks = open_beneath(run_dir_, rel / "hooks", O_RDONLY | O_DIRECTORY))
    for (const auto& name : names_in(hooks.get())) remember(rel / "hooks" / name);
  if (depth >= kMaxGitDepth) return;
  for (const auto& module : module_git_dirs(run_dir_, rel)) remember_git_dir(module, depth + 1);
}

void Quarantine::remember_git() {
  struct stat st {};
  for (const auto& path : nested_) {
    UniqueFd nested = open_beneath(run_dir_, path / ".git", O_PATH);
    if (nested && ::fstat(nested.get(), &st) == 0 && S_ISDIR(st.st_mode)) remember_git_dir(path / ".git", 1);
  }
  UniqueFd git = open_beneath(run_dir_, ".git", O_PATH);
  had_git_dir_ = git && ::fstat(git.get(), &st) == 0 && S_ISDIR(st.st_mode);
  if (!had_git_dir_) return;
  remember_git_dir(".git", 0);
  if (UniqueFd worktrees = open_beneath(run_dir_, ".git/worktrees", O_RDONLY | O_DIRECTORY))
    for (const auto& w : names_in(worktrees.get()))
      for (const char* f : {"commondir", "config.worktree"}) remember(fs::path(".git/worktrees") / w / f);
  // Submodules whose git dir lies in their own folder (the old layout) are
  // nested repositories at the paths .gitmodules names.
  if (UniqueFd modules = open_beneath(run_dir_, ".gitmodules", O_RDONLY)) {
    bool too_big = false;
    bool ok = true;
    for (const auto& e : parse_git_config(read_small(modules.get(), kMaxCheckedFile, too_big), ok)) {
      if (e.key.size() < 5 || e.key.substr(e.key.size() - 5) != ".path" || e.value.empty()) continue;
      const fs::path path = fs::path(e.value).lexically_normal();
      if (path.is_absolute() || path.string().rfind("..", 0) == 0) continue;
      submodule_paths_.push_back(path);
      UniqueFd nested = open_beneath(run_dir_, path / ".git", O_PATH);
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
      UniqueFd fd = open_beneath(run_dir_, walked, O_PATH | O_DIRECTORY);
      if (!fd) break;
      deepest = walked;
    }
    out.insert(run_folder_ / deepest);
  }
  return {out.begin(), out.end()};
}

std::optional<Quarantined> Quarantine::move_aside(int parent, const std::string& name, const fs::path& rel,
                                                  const std::string& why, const std::string& when,
                                                  bool may_copy) {
  Quarantined q;
  q.path = run_folder_ / rel;
  q.why = why;
  q.when = when;
  q.at = iso_utc_now();
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  q.kind = S_ISDIR(st.st_mode) ? "folder" : S_ISLNK(st.st_mode) ? "link" : "file";
  // Under the record folder, by the path it had; a second one gets a suffix.
  fs::path dest = record_dir_ / "quarantine" / rel;
  std::error_code ec;
  for (int n = 2; fs::exists(fs::symlink_status(dest, ec)) && n < 1000; ++n)
    dest = record_dir_ / "quarantine" / (rel.string() + "." + std::to_string(n));
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
  UniqueFd parent = open_beneath(run_dir_, p.rel.parent_path(), O_PATH | O_DIRECTORY);
  if (!parent) {
    // A link made on the way to the protected path (`.claude -> elsewhere`):
    // the link is what is moved aside, never what it points to.
    if (!p.parent_ok_at_start) return;
    const auto link = first_link_on_the_way(run_dir_, p.rel.parent_path());
    if (!link) return;  // absent, or not a folder: nothing there for a program to read
    UniqueFd dir = open_beneath(run_dir_, link->parent_path(), O_PATH | O_DIRECTORY);
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
  UniqueFd parent = open_beneath(run_dir_, rel.parent_path(), O_PATH | O_DIRECTORY);
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
    UniqueFd fd(::openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd || !S_ISREG(st.st_mode)) {
      why = "not a file git can read safely (" + why_if_unsafe + ")";
    } else {
      bool too_big = false;
      const std::string text = read_small(fd.get(), kMaxCheckedFile, too_big);
      std::vector<std::string> found;
      if (too_big)
        found.push_back("too large to check");
      else if (kind == "config")
        found = unsafe_git_config(text);
      else if (kind == "attributes")
        found = unsafe_git_attributes(text);
      else if (kind == "worktree-commondir") {
        std::string t = text;
        while (!t.empty() && (t.back() == '\n' || t.back() == '/')) t.pop_back();
        if (t != "../..")
          found.push_back("it names " + first_lines(t, 1, 200) + ", not the repository's own git dir");
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
  check_git_file(rel / "config", what + "'s config names a program git would run", "config", when, may_copy,
                 out);
  check_git_file(rel / "config.worktree", what + "'s worktree config names a program git would run", "config",
                 when, may_copy, out);
  check_git_file(rel / "commondir",
                 what + " got a commondir: git would take its config and hooks from the git dir it names",
                 "commondir", when, may_copy, out);
  check_git_file(rel / "info/attributes", what + "'s attributes select a driver git runs", "attributes", when,
                 may_copy, out);
  if (UniqueFd hooks = open_beneath(run_dir_, rel / "hooks", O_RDONLY | O_DIRECTORY))
    for (const auto& name : names_in(hooks.get()))
      check_git_file(rel / "hooks" / name, "a hook git runs as you, in " + what, "hook", when, may_copy, out);
  if (depth >= kMaxGitDepth) return;
  for (const auto& module : module_git_dirs(run_dir_, rel))
    check_git_dir(module, "the submodule git dir " + module.string(), when, may_copy, out, depth + 1);
}

void Quarantine::sweep_git(const std::string& when, bool may_copy, std::vector<Quarantined>& out) {
  UniqueFd git = open_beneath(run_dir_, ".git", O_PATH);
  struct stat st {};
  std::vector<fs::path> paths = nested_;
  if (git && ::fstat(git.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    // The repository's own config and hooks are read-only in the run; what it
    // may write in .git (objects, refs, submodules' and worktrees' git dirs) is
    // checked for what would make git run a program.
    check_git_dir(".git", had_git_dir_ ? "the repository" : "the repository the run made", when, may_copy,
                  out, 0);
    if (UniqueFd worktrees = open_beneath(run_dir_, ".git/worktrees", O_RDONLY | O_DIRECTORY)) {
      for (const auto& w : names_in(worktrees.get())) {
        const fs::path dir = fs::path(".git/worktrees") / w;
        check_git_file(dir / "commondir", "the worktree " + w + "'s commondir", "worktree-commondir", when,
                       may_copy, out);
        check_git_file(dir / "config.worktree",
                       "the worktree " + w + "'s config names a program git would run", "config", when,
                       may_copy, out);
      }
    }
    paths.insert(paths.end(), submodule_paths_.begin(), submodule_paths_.end());
    if (UniqueFd modules = open_beneath(run_dir_, ".gitmodules", O_RDONLY)) {
      bool too_big = false;
      bool ok = true;
      for (const auto& e : parse_git_config(read_small(modules.get(), kMaxCheckedFile, too_big), ok))
        if (e.key.size() > 5 && e.key.substr(e.key.size() - 5) == ".path" && !e.value.empty())
          paths.push_back(fs::path(e.value).lexically_normal());
    }
  }
  // Every repository in the run folder now, wherever the run made or cloned
  // it (`git init vendor/a/b/x`): what was not looked at when the run started
  // is judged by its change time (unchanged()).
  const WalkFound walk = find_repositories(run_dir_, kEndWalk, walk_cache_);
  // Nothing of the run can change the run folder now (paused or ended): what
  // the walk saw is what the next run's walks start from. A cache that
  // cannot be written costs the next run reads, nothing else.
  (void)walk_cache_.save();
  paths.insert(paths.end(), walk.repositories.begin(), walk.repositories.end());
  if (auto report = unvisited_report(walk, run_folder_, when)) out.push_back(std::move(*report));
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  for (const auto& path : paths) {
    if (path.empty() || path.is_absolute() || path.string().rfind("..", 0) == 0) continue;
    UniqueFd nested = open_beneath(run_dir_, path / ".git", O_PATH);
    if (nested && ::fstat(nested.get(), &st) == 0 && S_ISDIR(st.st_mode))
      check_git_dir(path / ".git", "the nested repository " + path.string(), when, may_copy, out, 1);
  }
}

std::vector<Quarantined> Quarantine::sweep(const std::string& when, bool git, bool may_copy) {
  std::lock_guard lock(mu_);
  std::vector<Quarantined> out;
  if (run_dir_ < 0) return out;
  for (auto& p : protected_) sweep_project_file(p, when, may_copy, out);
  if (git) sweep_git(when, may_copy, out);
  for (auto& q : out) {
    if (q.kind == "unvisited") continue;  // said, but nothing was moved
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

}  // namespace px::supervisor

namespace px::supervisor {

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
    for (const auto& o : j.value("originals", nlohmann::json::array())) {
      const auto& bin = o.at(1).get_binary();
      q->git_originals_[o.at(0).get<std::string>()] = {std::string(bin.begin(), bin.end()),
                                                       o.at(2).get<mode_t>()};
    }
    for (const auto& m : j.value("moved", nlohmann::json::array()))
      q->moved_.push_back(quarantined_from_json(m));
  } catch (const nlohmann::json::exception& e) {
    return Error::invalid(std::string("the quarantine's state cannot be read: ") + e.what());
  }
  q->run_dir_ = run_dir.release();
  // Not the file the dead supervisor's walks read: nothing says it is still
  // the one the run could not reach. This walk reads every folder (within
  // its bounds) and leaves what it saw for the next run.
  if (!walk_cache_dir.empty()) q->walk_cache_ = WalkCache::fresh(walk_cache_dir, q->run_folder_, q->run_dir_);
  return q;
}

}  // namespace px::supervisor
