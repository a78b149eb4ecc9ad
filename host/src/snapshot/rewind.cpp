// Rewind: snapshot the tree as it is (so the rewind can be undone), work out
// the changes, verify every object they need, then apply them below the root
// without following links: removals deepest first, then creations shallowest
// first (each file written under a temp name and renamed into place), then
// folder modes and times deepest first.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "snapshot/fault.hpp"
#include "snapshot/safe_fs.hpp"
#include "snapshot/store_impl.hpp"

namespace px::snapshot {
namespace {

using Kind = Change::Kind;

struct Op {
  Kind kind;
  std::string path;
  const Entry* cur = nullptr;
  const Entry* tgt = nullptr;
  std::string note;
};

std::uint32_t safe_mode(std::uint32_t mode) {
  return mode & ~static_cast<std::uint32_t>(S_ISUID | S_ISGID);
}

bool has_parent_in(const std::string& path, const std::unordered_set<std::string>& set) {
  if (set.empty()) return false;
  std::string_view p = path;
  while (true) {
    p = parent_of(p);
    if (p.empty()) return false;
    if (set.count(std::string(p)) != 0) return true;
  }
}

bool meta_differs(const Entry& c, const Entry& t, bool root) {
  if (c.mode != safe_mode(t.mode)) return true;
  if (c.type != 'l' && c.mtime_ns != t.mtime_ns) return true;
  return root && (c.uid != t.uid || c.gid != t.gid);
}

std::vector<Op> diff(const std::vector<Entry>& cur, const std::vector<Entry>& tgt,
                     const std::vector<std::string>& excludes) {
  const bool root = ::geteuid() == 0;
  std::vector<Op> ops;
  std::unordered_set<std::string> skip;  // subtrees left as they are (unreadable, moved aside)
  std::size_t i = 0, j = 0;
  while (i < cur.size() || j < tgt.size()) {
    const Entry* c = nullptr;
    const Entry* t = nullptr;
    if (j >= tgt.size() || (i < cur.size() && path_less(cur[i].path, tgt[j].path))) {
      c = &cur[i++];
    } else if (i >= cur.size() || path_less(tgt[j].path, cur[i].path)) {
      t = &tgt[j++];
    } else {
      c = &cur[i++];
      t = &tgt[j++];
    }
    const std::string& path = c != nullptr ? c->path : t->path;
    if (is_excluded(path, excludes) || has_parent_in(path, skip)) continue;
    auto keep = [&](const char* why) {
      ops.push_back({Kind::keep, path, c, t, why});
      if ((c != nullptr && c->type == 'd') || (t != nullptr && t->type == 'd')) skip.insert(path);
    };
    if (c != nullptr && (c->flags & kUnreadable)) {
      keep("could not be read before the rewind, so it is left as it is");
      continue;
    }
    if (t != nullptr && (t->flags & kUnreadable)) {
      keep("could not be read when the snapshot was taken, so it is left as it is");
      continue;
    }
    if (t != nullptr && (t->type == 's' || t->type == 'c' || t->type == 'b')) {
      if (c == nullptr || c->type != t->type) keep("sockets and devices are recorded but never recreated");
      continue;
    }
    if (c == nullptr) {
      ops.push_back({Kind::create, path, c, t, {}});
      continue;
    }
    if (t == nullptr) {
      ops.push_back({Kind::remove, path, c, t, {}});
      continue;
    }
    if (c->type == t->type) {
      bool content = (c->type == 'f' && c->hash != t->hash) || (c->type == 'l' && c->target != t->target);
      if (content) {
        ops.push_back({Kind::update, path, c, t, {}});
      } else if (c->type != 'l' && meta_differs(*c, *t, root)) {
        ops.push_back({Kind::metadata, path, c, t, {}});
      }
      continue;
    }
    if (c->type == 'd') {
      bool has_children = i < cur.size() && cur[i].path.size() > path.size() &&
                          cur[i].path.compare(0, path.size(), path) == 0 && cur[i].path[path.size()] == '/';
      if (has_children) {
        ops.push_back({Kind::move_aside, path, c, t, {}});
        skip.insert(path);
        continue;
      }
    }
    ops.push_back({Kind::update, path, c, t, {}});
  }
  return ops;
}

class Applier {
 public:
  Applier(int root, Objects& objects, std::string shown, std::string undo_id, RewindResult& result,
          const ProgressFn& progress, const std::vector<Entry>& target)
      : root_(root),
        objects_(objects),
        shown_(std::move(shown)),
        undo_(std::move(undo_id)),
        result_(result),
        progress_fn_(progress),
        as_root_(::geteuid() == 0) {
    for (const auto& e : target)
      if (e.type == 'd') target_dirs_.emplace(e.path, &e);
  }

  Status run(std::vector<Op>& ops) {
    for (const auto& op : ops) {
      if (op.tgt != nullptr && op.tgt->type == 'f' &&
          (op.kind == Kind::create || op.kind == Kind::update || op.kind == Kind::move_aside)) {
        ++progress_.files_total;
        progress_.bytes_total += op.tgt->size;
      }
    }
    progress_.phase = "restoring";
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) PX_TRY(remove_phase(*it));
    for (auto& op : ops) PX_TRY(create_phase(op));
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) PX_TRY(dir_phase(*it));
    // Folders whose contents changed got a new mtime from the rewind itself.
    std::unordered_set<std::string> done_dirs, touched;
    for (const auto& op : ops) {
      if (op.kind == Kind::keep) continue;
      if (op.tgt != nullptr && op.tgt->type == 'd') done_dirs.insert(op.path);
      std::string_view p = parent_of(op.path);
      while (!p.empty()) {
        touched.insert(std::string(p));
        p = parent_of(p);
      }
    }
    std::vector<const Entry*> fix;
    for (const auto& rel : touched) {
      auto it = target_dirs_.find(rel);
      if (it != target_dirs_.end() && done_dirs.count(rel) == 0) fix.push_back(it->second);
    }
    std::sort(fix.begin(), fix.end(),
              [](const Entry* a, const Entry* b) { return path_less(b->path, a->path); });
    for (const Entry* e : fix) {
      PX_TRY_ASSIGN(auto dir, parent(e->path));
      PX_TRY(apply_meta(dir.get(), std::string(name_of(e->path)), e->path, *e));
    }
    for (const auto& [rel, mode] : loosened_) {
      if (target_dirs_.count(rel) != 0) continue;  // already given its snapshot mode
      UniqueFd fd = open_beneath(root_, rel, O_RDONLY | O_DIRECTORY);
      if (fd) ::fchmod(fd.get(), mode);
    }
    ::syncfs(root_);
    return ok();
  }

  std::uint64_t done = 0;

 private:
  std::string show(const std::string& rel) const { return shown_ + "/" + display_name(rel); }

  Error fail(const std::string& rel, const std::string& what, int err) const {
    return Error::io(what + " " + show(rel), err);
  }

  Result<UniqueFd> parent(const std::string& rel) {
    std::string p(parent_of(rel));
    UniqueFd fd = open_beneath(root_, p, O_RDONLY | O_DIRECTORY);
    if (!fd) {
      int err = errno;
      if (err == ELOOP || err == EXDEV || err == ENOTDIR)
        return Error::conflict("Refusing to write " + show(rel) +
                               ": a parent folder was replaced by a link (" + std::strerror(err) +
                               "). Nothing outside " + shown_ + " was touched.");
      return fail(rel, "Could not open the folder of", err);
    }
    return fd;
  }

  // Creation under a read-only folder (0555) as a non-root user: open it up for
  // the rewind and put its mode back at the end.
  bool loosen(int dirfd, const std::string& rel) {
    struct stat st {};
    if (as_root_ || ::fstat(dirfd, &st) != 0 || (st.st_mode & S_IRWXU) == S_IRWXU) return false;
    loosened_.emplace_back(std::string(parent_of(rel)), st.st_mode & 07777);
    return ::fchmod(dirfd, (st.st_mode & 07777) | S_IRWXU) == 0;
  }

  // The entry still is what the pre-rewind snapshot recorded; otherwise it
  // changed after that snapshot and replacing it could lose data.
  bool unchanged(int dirfd, const std::string& name, const Entry& c) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
    if (type_of(st.st_mode) != c.type) return false;
    if (c.type == 'f' && (static_cast<std::uint64_t>(st.st_size) != c.size || mtime_ns(st) != c.mtime_ns))
      return false;
    return true;
  }

  void kept(const Op& op, const std::string& why) { result_.warnings.push_back(show(op.path) + ": " + why); }

  Status remove_phase(const Op& op) {
    if (op.cur == nullptr) return ok();
    bool removes = op.kind == Kind::remove || op.kind == Kind::move_aside ||
                   (op.kind == Kind::update && op.cur->type != op.tgt->type &&
                    (op.cur->type == 'd' || op.tgt->type == 'd'));
    if (!removes) return ok();
    PX_TRY_ASSIGN(auto dir, parent(op.path));
    std::string name(name_of(op.path));
    if (op.kind == Kind::move_aside) return move_aside(dir.get(), op);
    if (op.cur->type == 'd') {
      if (::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) {
        ++result_.entries_removed;
        fault_point("restore-removed");
        return ok();
      }
      if (errno == ENOTEMPTY || errno == EEXIST) {
        if (op.kind == Kind::update) return move_aside(dir.get(), op);
        kept(op, "kept: it still holds entries no snapshot covers (excluded or unreadable)");
        return ok();
      }
      return fail(op.path, "Could not remove", errno);
    }
    if (!unchanged(dir.get(), name, *op.cur)) {
      if (op.kind == Kind::update)
        return Error::conflict(show(op.path) + " changed after the pre-rewind snapshot " + undo_ +
                               " was taken; run the rewind again.");
      kept(op, "kept: it changed after the pre-rewind snapshot was taken");
      return ok();
    }
    if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
      if (errno == EACCES && loosen(dir.get(), op.path) && ::unlinkat(dir.get(), name.c_str(), 0) == 0) {
      } else {
        return fail(op.path, "Could not remove", errno);
      }
    }
    ++result_.entries_removed;
    fault_point("restore-removed");
    return ok();
  }

  Status move_aside(int dirfd, const Op& op) {
    std::string name(name_of(op.path));
    for (int n = 0; n < 100; ++n) {
      std::string aside = name + ".parallex-aside-" + undo_ + (n ? "-" + std::to_string(n) : "");
      if (::renameat2(dirfd, name.c_str(), dirfd, aside.c_str(), RENAME_NOREPLACE) == 0) {
        std::string rel = std::string(parent_of(op.path));
        rel = rel.empty() ? aside : rel + "/" + aside;
        result_.warnings.push_back(show(op.path) + ": a folder with contents was in the way; moved to " +
                                   show(rel));
        return ok();
      }
      if (errno == ENOENT) return ok();
      if (errno != EEXIST) return fail(op.path, "Could not move aside", errno);
    }
    return fail(op.path, "Could not find a free name to move aside", EEXIST);
  }

  Status create_phase(const Op& op) {
    if (op.tgt == nullptr || op.kind == Kind::remove || op.kind == Kind::keep) return ok();
    PX_TRY_ASSIGN(auto dir, parent(op.path));
    std::string name(name_of(op.path));
    const Entry& t = *op.tgt;
    if (op.kind == Kind::metadata) return apply_meta(dir.get(), name, op.path, t);
    if (op.cur != nullptr && op.cur->type != 'd' && t.type != 'd' && !unchanged(dir.get(), name, *op.cur))
      return Error::conflict(show(op.path) + " changed after the pre-rewind snapshot " + undo_ +
                             " was taken; run the rewind again.");
    if (t.type == 'd') {
      if (::mkdirat(dir.get(), name.c_str(), 0700) != 0) {
        int err = errno;
        if (err == EACCES && loosen(dir.get(), op.path) && ::mkdirat(dir.get(), name.c_str(), 0700) == 0)
          return ok();
        struct stat st {};
        if (err == EEXIST && ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(st.st_mode))
          return ok();
        return fail(op.path, "Could not create the folder", err);
      }
      return ok();
    }
    std::string tmp = ".parallex-rewind-" + random_hex(6);
    auto make = [&]() -> int {
      if (t.type == 'f') return write_tmp(dir.get(), tmp, t);
      if (t.type == 'l') return ::symlinkat(t.target.c_str(), dir.get(), tmp.c_str()) == 0 ? 0 : errno;
      if (t.type == 'p') return ::mkfifoat(dir.get(), tmp.c_str(), 0600) == 0 ? 0 : errno;
      return 0;
    };
    int err = make();
    if (err == EACCES && loosen(dir.get(), op.path)) err = make();
    if (err != 0) {
      ::unlinkat(dir.get(), tmp.c_str(), 0);
      return fail(op.path, "Could not restore", err);
    }
    if (t.type != 'f') (void)apply_meta(dir.get(), tmp, op.path, t);
    fault_point("restore-tmp-written");
    if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
      err = errno;
      ::unlinkat(dir.get(), tmp.c_str(), 0);
      return fail(op.path, "Could not put in place", err);
    }
    ++done;
    if (t.type == 'f') {
      ++result_.files_written;
      ++progress_.files_done;
      progress_.bytes_done += t.size;
      if (progress_fn_) progress_fn_(progress_);
    }
    fault_point("restore-file-done");
    return ok();
  }

  int write_tmp(int dirfd, const std::string& tmp, const Entry& t) {
    auto obj = objects_.open(t.hash, show(t.path));
    if (!obj) return ENOENT;
    UniqueFd fd(::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return errno;
    if (int err = copy_content(obj.value().get(), fd.get(), t.size)) return err;
    if (as_root_ && ::fchown(fd.get(), t.uid, t.gid) != 0) return errno;
    if (::fchmod(fd.get(), safe_mode(t.mode)) != 0) return errno;
    struct timespec ts[2];
    ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(t.mtime_ns / 1000000000);
    ts[0].tv_nsec = ts[1].tv_nsec = static_cast<long>(t.mtime_ns % 1000000000);
    if (::futimens(fd.get(), ts) != 0) return errno;
    return 0;
  }

  // Never follows a link: the *at calls use AT_SYMLINK_NOFOLLOW, and a link
  // where a file was expected is simply not a match for chmod.
  Status apply_meta(int dirfd, const std::string& name, const std::string& rel, const Entry& t) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return fail(rel, "Could not stat", errno);
    if (type_of(st.st_mode) != t.type) return ok();
    if (as_root_ && ::fchownat(dirfd, name.c_str(), t.uid, t.gid, AT_SYMLINK_NOFOLLOW) != 0)
      return fail(rel, "Could not set the owner of", errno);
    if (t.type != 'l' && ::fchmodat(dirfd, name.c_str(), safe_mode(t.mode), AT_SYMLINK_NOFOLLOW) != 0)
      return fail(rel, "Could not set the mode of", errno);
    struct timespec ts[2];
    ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(t.mtime_ns / 1000000000);
    ts[0].tv_nsec = ts[1].tv_nsec = static_cast<long>(t.mtime_ns % 1000000000);
    ::utimensat(dirfd, name.c_str(), ts, AT_SYMLINK_NOFOLLOW);
    return ok();
  }

  // Folder modes and times last, deepest first: writing inside a folder changes its mtime.
  Status dir_phase(const Op& op) {
    if (op.tgt == nullptr || op.tgt->type != 'd' || op.kind == Kind::keep || op.kind == Kind::remove)
      return ok();
    PX_TRY_ASSIGN(auto dir, parent(op.path));
    return apply_meta(dir.get(), std::string(name_of(op.path)), op.path, *op.tgt);
  }

  int root_;
  Objects& objects_;
  std::string shown_;
  std::string undo_;
  RewindResult& result_;
  const ProgressFn& progress_fn_;
  Progress progress_;
  bool as_root_;
  std::vector<std::pair<std::string, std::uint32_t>> loosened_;
  std::unordered_map<std::string, const Entry*> target_dirs_;
};

}  // namespace

Result<RewindResult> Store::rewind(const RewindOptions& o) {
  PX_TRY_ASSIGN(auto lock, detail::lock_store(dirfd_.get(), dir_));
  PX_TRY_ASSIGN(auto fds, detail::open_fds(dirfd_.get(), dir_));
  const std::string shown = display_name(o.source.string());
  auto busy = [&]() -> Status {
    if (o.is_busy && o.is_busy())
      return Error::conflict("Refusing to rewind " + shown +
                             " while it is in use (the agent is running); stop it first.");
    return ok();
  };
  PX_TRY(busy());

  SnapshotInfo target;
  if (o.to) {
    PX_TRY_ASSIGN(target, detail::find_info(fds.snapshots.get(), dir_.string(), *o.to));
  } else {
    PX_TRY_ASSIGN(auto all, detail::list_infos(fds.snapshots.get(), dir_.string()));
    const SnapshotInfo* pick = nullptr;
    for (const auto& info : all)
      if (info.kind != "pre-rewind") pick = &info;
    if (pick == nullptr)
      return Error::not_found("There is no snapshot in " + dir_.string() + " to rewind to.");
    target = *pick;
  }
  PX_TRY_ASSIGN(auto tgt_entries, detail::load_tree(fds, target));

  std::vector<std::string> excludes = o.excludes;
  excludes.insert(excludes.end(), target.excludes.begin(), target.excludes.end());
  PX_TRY_ASSIGN(excludes, normalize_excludes(excludes));

  TakeOptions take;
  take.source = o.source;
  take.excludes = excludes;
  take.label = "before rewind to " + target.id;
  take.kind = "pre-rewind";
  take.progress = o.progress;
  StatCache cache;
  PX_TRY_ASSIGN(auto scan, detail::scan_tree(fds, dir_, take, !o.dry_run, cache));

  RewindResult result;
  result.target_id = target.id;
  std::vector<Op> ops = diff(scan.entries, tgt_entries, excludes);
  bool acts = false;
  for (const auto& op : ops) {
    result.changes.push_back(
        {op.kind, op.path, op.cur ? op.cur->type : '\0', op.tgt ? op.tgt->type : '\0', op.note});
    if (op.kind != Kind::keep) acts = true;
  }
  if (o.dry_run) return result;
  if (!acts) {
    (void)cache.save(fds.root, fds.tmp.get(), scan.info.source, scan.walk_start_ns);
    return result;
  }
  PX_TRY(detail::commit(fds, scan, cache));
  result.undo_id = scan.info.id;
  fault_point("rewind-undo-taken");

  // Every object the rewind needs must be intact before anything is touched.
  Objects objects(fds.objects.get(), fds.tmp.get());
  Progress verifying;
  verifying.phase = "verifying";
  std::unordered_set<std::string> checked;
  for (const auto& op : ops) {
    const Entry* t = op.tgt;
    if (t == nullptr || t->type != 'f' || op.kind == Kind::keep || op.kind == Kind::metadata ||
        op.kind == Kind::remove)
      continue;
    ++verifying.files_total;
    verifying.bytes_total += t->size;
  }
  for (const auto& op : ops) {
    const Entry* t = op.tgt;
    if (t == nullptr || t->type != 'f' || op.kind == Kind::keep || op.kind == Kind::metadata ||
        op.kind == Kind::remove)
      continue;
    if (checked.insert(t->hash).second)
      PX_TRY(objects.verify(t->hash, t->size, shown + "/" + display_name(t->path)));
    ++verifying.files_done;
    verifying.bytes_done += t->size;
    if (o.progress) o.progress(verifying);
  }
  PX_TRY(busy());

  UniqueFd root(::open(o.source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) return Error::io("Could not open " + shown, errno);
  Applier applier(root.get(), objects, shown, result.undo_id, result, o.progress, tgt_entries);
  if (auto st = applier.run(ops); !st) {
    std::size_t total = 0;
    for (const auto& op : ops) total += op.kind != Kind::keep;
    return Error{st.error().kind,
                 "Rewind of " + shown + " to " + target.id + " stopped: " + st.error().message + ". " +
                     std::to_string(result.files_written) + " files were written and " +
                     std::to_string(result.entries_removed) + " entries removed of " + std::to_string(total) +
                     " changes; the state before the rewind is snapshot " + result.undo_id +
                     " (`parallex snapshot rewind --to " + result.undo_id + "` goes back to it)."};
  }
  return result;
}

}  // namespace px::snapshot
