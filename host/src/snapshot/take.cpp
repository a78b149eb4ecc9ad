// Taking a snapshot: one stat walk through directory fds, then the files the
// stat cache cannot vouch for are hashed (and, for a real snapshot, stored).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>

#include "snapshot/fault.hpp"
#include "snapshot/safe_fs.hpp"
#include "snapshot/store_impl.hpp"

namespace px::snapshot {
namespace {

// What getdents64 returns, one record per entry (glibc does not declare it).
struct Dirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// strerror is not safe across threads (the walk runs on several).
std::string error_text(int err) {
  const char* text = ::strerrordesc_np(err);
  return text ? text : "error " + std::to_string(err);
}

struct Item {
  Entry e;
  struct stat st {};
  bool drop = false;
};

class Walker {
 public:
  Walker(dev_t root_dev, const std::vector<std::string>& excludes, const std::string& source_display)
      : root_dev_(root_dev), excludes_(excludes), source_(source_display) {}

  // Takes ownership of `fd`; the folder stays open while its children are
  // walked, so depth costs one fd per level and no path is ever resolved twice.
  // With `defer` set, sub-folders are listed there instead of walked (the
  // top level of a parallel walk).
  void walk(int fd, const std::string& prefix, std::vector<std::string>* defer = nullptr) {
    // getdents64 straight on the fd: fdopendir would add two fcntl calls per
    // folder, which show in a walk of thousands of them.
    const UniqueFd guard(fd);
    const int dirfd = fd;
    std::vector<std::string> names;
    alignas(8) char buf[32 * 1024];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dirfd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        warn(prefix, error_text(errno));
        break;
      }
      if (n == 0) break;
      for (long off = 0; off < n;) {
        const char* record = buf + off;
        unsigned short reclen = 0;
        std::memcpy(&reclen, record + offsetof(Dirent64, d_reclen), sizeof reclen);
        off += reclen;
        const char* name = record + offsetof(Dirent64, d_name);
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        names.emplace_back(name);
      }
    }
    // Sorted here, and each folder's subtree walked right after it, the items
    // come out in manifest order (path_less: a name has no '/', and bytes
    // compare unsigned), so the whole list needs no sort afterwards.
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      std::string rel = prefix.empty() ? name : prefix + "/" + name;
      if (is_excluded(rel, excludes_)) continue;
      Item item;
      if (::fstatat(dirfd, name.c_str(), &item.st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT) warn(rel, error_text(errno));
        continue;
      }
      Entry& e = item.e;
      e.path = rel;
      e.type = type_of(item.st.st_mode);
      e.mode = item.st.st_mode & 07777;
      e.uid = item.st.st_uid;
      e.gid = item.st.st_gid;
      e.mtime_ns = mtime_ns(item.st);
      if (e.type == '?') continue;
      if (e.type == 'f') e.size = static_cast<std::uint64_t>(item.st.st_size);
      if (e.type == 'l') {
        std::string target(static_cast<std::size_t>(item.st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
        if (n < 0) {
          warn(rel, error_text(errno));
          continue;
        }
        target.resize(static_cast<std::size_t>(n));
        e.target = std::move(target);
        e.size = e.target.size();
      }
      items.push_back(std::move(item));
      if (e.type != 'd') continue;
      if (items.back().st.st_dev != root_dev_) {
        warn(rel, "another filesystem is mounted here; its contents are not snapshotted");
        items.back().e.flags |= kUnreadable;
        continue;
      }
      if (defer) {
        defer->push_back(rel);
        continue;
      }
      if (!walk_into(dirfd, name, rel)) items.back().e.flags |= kUnreadable;
    }
  }

  // Opens the folder `name` of `dirfd` (never through a link) and walks it;
  // false (with a warning) when it cannot be opened.
  bool walk_into(int dirfd, const std::string& name, const std::string& rel) {
    int sub = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      warn(rel, error_text(errno));
      return false;
    }
    walk(sub, rel);
    return true;
  }

  // Adds what another walker found.
  void absorb(Walker&& other) {
    items.insert(items.end(), std::make_move_iterator(other.items.begin()),
                 std::make_move_iterator(other.items.end()));
    warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
    incomplete = incomplete || other.incomplete;
  }

  void warn(const std::string& rel, const std::string& why) {
    incomplete = true;
    warnings.push_back((rel.empty() ? source_ : source_ + "/" + display_name(rel)) + ": " + why);
  }

  std::vector<Item> items;
  std::vector<std::string> warnings;
  bool incomplete = false;

 private:
  dev_t root_dev_;
  const std::vector<std::string>& excludes_;
  std::string source_;
};

std::string make_id(std::int64_t t_ns) {
  std::time_t secs = static_cast<std::time_t>(t_ns / 1000000000);
  struct tm tm {};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf) + "-" + random_hex(3);
}

}  // namespace

namespace detail {

Result<Scan> scan_tree(StoreFds& fds, const fs::path& store_dir, const TakeOptions& options, bool store,
                       StatCache& cache) {
  PX_TRY_ASSIGN(auto excludes, normalize_excludes(options.excludes));
  PX_TRY(check_separate(options.source, store_dir));
  const std::string source = options.source.string();
  const std::string shown = display_name(source);
  Scan scan;
  scan.walk_start_ns = now_ns();
  UniqueFd root(::open(source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root) {
    int err = errno;
    if (err == ENOENT) return Error::not_found("The folder " + shown + " does not exist.");
    return Error::io("Could not open " + shown, err);
  }
  struct stat root_st {};
  if (::fstat(root.get(), &root_st) != 0) return Error::io("Could not stat " + shown, errno);

  Walker walker(root_st.st_dev, excludes, shown);
  int walk_fd = ::fcntl(root.get(), F_DUPFD_CLOEXEC, 0);
  if (walk_fd < 0) return Error::io("Could not open " + shown, errno);
  // The walk is mostly the kernel's path lookups and directory reads: the
  // top-level folders are walked on every core at once.
  std::vector<std::string> tops;
  walker.walk(walk_fd, "", &tops);
  const unsigned threads =
      static_cast<unsigned>(std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, tops.size()}));
  std::vector<Walker> found(tops.size(), Walker(root_st.st_dev, excludes, shown));
  std::vector<char> opened(tops.size(), 0);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < tops.size();)
      opened[i] = found[i].walk_into(root.get(), tops[i], tops[i]) ? 1 : 0;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // Each top-level folder's subtree goes right after its entry: manifest order.
  std::vector<Item> ordered;
  std::size_t total = walker.items.size();
  for (const auto& f : found) total += f.items.size();
  ordered.reserve(total);
  std::size_t t = 0;
  for (auto& item : walker.items) {
    const bool top = t < tops.size() && item.e.path == tops[t];
    if (top && !opened[t]) item.e.flags |= kUnreadable;
    ordered.push_back(std::move(item));
    if (!top) continue;
    for (auto& sub : found[t].items) ordered.push_back(std::move(sub));
    found[t].items.clear();
    walker.absorb(std::move(found[t]));
    ++t;
  }
  walker.items = std::move(ordered);
  const auto in_order = [](const Item& a, const Item& b) { return path_less(a.e.path, b.e.path); };
  if (!std::is_sorted(walker.items.begin(), walker.items.end(), in_order))
    std::sort(walker.items.begin(), walker.items.end(), in_order);
  cache.load(fds.root, source);

  Progress progress;
  progress.phase = store ? "storing" : "scanning";
  std::vector<Item*> todo;
  for (auto& item : walker.items) {
    if (item.e.type != 'f') continue;
    if (const std::string* h = cache.reuse(item.e.path, item.st)) {
      item.e.hash = *h;
      continue;
    }
    todo.push_back(&item);
    progress.bytes_total += item.e.size;
  }
  progress.files_total = todo.size();
  std::function<void(std::uint64_t)> on_bytes;
  if (options.progress) {
    on_bytes = [&](std::uint64_t n) {
      progress.bytes_done += n;
      options.progress(progress);
    };
  }
  Objects objects(fds.objects.get(), fds.tmp.get());
  std::uint64_t new_bytes = 0;
  for (Item* item : todo) {
    Entry& e = item->e;
    const std::string display = shown + "/" + display_name(e.path);
    UniqueFd fd = open_beneath(root.get(), e.path, O_RDONLY | O_NONBLOCK | O_NOATIME);
    if (!fd && errno == EPERM) fd = open_beneath(root.get(), e.path, O_RDONLY | O_NONBLOCK);
    if (!fd) {
      int err = errno;
      if (err == ENOENT) {
        item->drop = true;  // deleted since the walk: it is not part of this state
      } else {
        e.flags |= kUnreadable;
        walker.warn(e.path, error_text(err));
      }
      continue;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      item->drop = true;
      walker.warn(e.path, "replaced by something that is not a file while being snapshotted");
      continue;
    }
    std::string hash;
    bool changed = false;
    if (store) {
      PX_TRY_ASSIGN(auto stored, objects.put_file(fd.get(), st, display, on_bytes ? &on_bytes : nullptr));
      if (!stored.read_error.empty()) {
        e.flags |= kUnreadable;
        walker.warn(e.path, stored.read_error);
        continue;
      }
      hash = stored.hash;
      changed = stored.changed;
      new_bytes += stored.new_bytes;
      if (stored.new_bytes > 0) scan.wrote_objects = true;
    } else {
      auto h = hash_fd(fd.get(), static_cast<std::uint64_t>(st.st_size), on_bytes ? &on_bytes : nullptr);
      if (!h) {
        e.flags |= kUnreadable;
        walker.warn(e.path, h.error().message);
        continue;
      }
      hash = h.value().hash;
      changed = h.value().short_read;
    }
    struct stat after {};
    ::fstat(fd.get(), &after);
    e.hash = hash;
    e.size = static_cast<std::uint64_t>(after.st_size);
    e.mode = after.st_mode & 07777;
    e.mtime_ns = mtime_ns(after);
    if (changed) {
      e.flags |= kChanged;
      walker.warn(e.path, "changed while being snapshotted; the snapshot holds one consistent copy of it");
    } else {
      cache.put(e.path, st, hash);
    }
    ++progress.files_done;
    if (options.progress) options.progress(progress);
  }

  auto& info = scan.info;
  for (auto& item : walker.items) {
    if (item.drop) continue;
    if (item.e.type == 'f') {
      ++info.files;
      info.bytes += item.e.size;
    }
    scan.entries.push_back(std::move(item.e));
  }
  info.entries = scan.entries.size();
  info.id = make_id(scan.walk_start_ns);
  info.time_ns = scan.walk_start_ns;
  info.label = options.label;
  info.kind = options.kind.empty() ? "manual" : options.kind;
  info.source = source;
  info.excludes = excludes;
  info.warnings = std::move(walker.warnings);
  info.incomplete = walker.incomplete;
  std::string tree = serialize_tree(scan.entries);
  if (store) {
    PX_TRY_ASSIGN(auto stored, objects.put_bytes(tree, "the manifest of " + shown));
    info.tree = stored.hash;
    new_bytes += stored.new_bytes;
    if (stored.new_bytes > 0) scan.wrote_objects = true;
  } else {
    info.tree = hash_bytes(tree);
  }
  info.new_bytes = new_bytes;
  return scan;
}

Status commit(StoreFds& fds, Scan& scan, const StatCache& cache) {
  // Objects reach the disk before the record that lists them.
  if (scan.wrote_objects && ::syncfs(fds.objects.get()) != 0)
    return Error::io("Could not flush the snapshot store " + fds.display, errno);
  fault_point("record-write");
  PX_TRY(write_file_durably(fds.tmp.get(), fds.snapshots.get(), scan.info.id + ".json",
                            serialize_info(scan.info), fds.display + "/snapshots/" + scan.info.id + ".json"));
  fault_point("snapshot-committed");
  (void)cache.save(fds.root, fds.tmp.get(), scan.info.source, scan.walk_start_ns);
  return ok();
}

}  // namespace detail

Result<SnapshotInfo> Store::take(const TakeOptions& options) {
  PX_TRY_ASSIGN(auto lock, detail::lock_store(dirfd_.get(), dir_));
  PX_TRY_ASSIGN(auto fds, detail::open_fds(dirfd_.get(), dir_));
  StatCache cache;
  PX_TRY_ASSIGN(auto scan, detail::scan_tree(fds, dir_, options, true, cache));
  PX_TRY(detail::commit(fds, scan, cache));
  return scan.info;
}

}  // namespace px::snapshot
