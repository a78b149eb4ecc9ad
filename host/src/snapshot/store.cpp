#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <unordered_set>

#include "common/logging.hpp"
#include "common/paths.hpp"
#include "snapshot/fault.hpp"
#include "snapshot/safe_fs.hpp"
#include "snapshot/store_impl.hpp"

namespace px::snapshot {

const char* to_string(Change::Kind kind) {
  switch (kind) {
    case Change::Kind::create:
      return "create";
    case Change::Kind::update:
      return "update";
    case Change::Kind::metadata:
      return "metadata";
    case Change::Kind::remove:
      return "remove";
    case Change::Kind::move_aside:
      return "move-aside";
    case Change::Kind::keep:
      return "keep";
  }
  return "?";
}

Result<std::vector<std::string>> normalize_excludes(const std::vector<std::string>& excludes) {
  std::vector<std::string> out;
  for (std::string e : excludes) {
    while (e.size() >= 2 && e.compare(0, 2, "./") == 0) e.erase(0, 2);
    while (!e.empty() && e.back() == '/') e.pop_back();
    bool bad = e.empty() || e.front() == '/';
    std::size_t start = 0;
    while (!bad && start <= e.size()) {
      std::size_t slash = e.find('/', start);
      std::string_view comp(e.data() + start, (slash == std::string::npos ? e.size() : slash) - start);
      if (comp.empty() || comp == "." || comp == "..") bad = true;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (bad)
      return Error::invalid(
          "Exclude \"" + display_name(e) +
          "\" must be a path relative to the snapshotted folder, without \"..\" (e.g. secrets).");
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(std::move(e));
  }
  return out;
}

Status check_store_location(const fs::path& source, const fs::path& store) {
  return detail::check_separate(source, store);
}

bool is_excluded(std::string_view rel, const std::vector<std::string>& excludes) {
  for (const auto& e : excludes) {
    if (rel.size() >= e.size() && rel.compare(0, e.size(), e) == 0 &&
        (rel.size() == e.size() || rel[e.size()] == '/'))
      return true;
  }
  return false;
}

namespace detail {

Result<StoreFds> open_fds(int root, const fs::path& dir) {
  StoreFds fds;
  fds.root = root;
  fds.display = dir.string();
  auto sub = [&](const char* name, UniqueFd& out) -> Status {
    if (::mkdirat(root, name, 0700) != 0 && errno != EEXIST)
      return Error::io("Could not create " + (dir / name).string(), errno);
    out.reset(::openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!out) return Error::io("Could not open " + (dir / name).string(), errno);
    return ok();
  };
  PX_TRY(sub("objects", fds.objects));
  PX_TRY(sub("snapshots", fds.snapshots));
  PX_TRY(sub("tmp", fds.tmp));
  return fds;
}

Result<UniqueFd> lock_store(int root, const fs::path& dir, std::chrono::milliseconds wait) {
  UniqueFd fd(::openat(root, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Error::io("Could not open the lock of the snapshot store " + dir.string(), errno);
  // Two runs of one agent started together both snapshot its home: the second
  // waits for the first (a snapshot takes seconds), never fails for it.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return Error::io("Could not lock the snapshot store " + dir.string(), errno);
    if (std::chrono::steady_clock::now() >= deadline)
      return Error::conflict(
          "The snapshot store " + dir.string() + " is in use by another parallex process" +
          (wait.count() > 0 ? " (waited " + std::to_string(wait.count() / 1000) + " s)" : "") +
          "; try again when it has finished.");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return fd;
}

Result<std::vector<SnapshotInfo>> list_infos(int snapshots_dir, const std::string& display,
                                             std::vector<std::string>* unreadable) {
  UniqueFd dup(::openat(snapshots_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = dup ? ::fdopendir(dup.get()) : nullptr;
  if (d == nullptr) return Error::io("Could not list the snapshots in " + display, errno);
  dup.release();
  std::vector<SnapshotInfo> out;
  while (dirent* de = ::readdir(d)) {
    std::string name = de->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    auto text = read_file_at(snapshots_dir, name, display + "/snapshots/" + name);
    auto info = text ? parse_info(text.value()) : Result<SnapshotInfo>(text.error());
    if (!info || info.value().id + ".json" != name) {
      spdlog::warn("Skipping unreadable snapshot record {}/snapshots/{}", display, name);
      if (unreadable) unreadable->push_back(name);
      continue;
    }
    out.push_back(std::move(info).value());
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.id < b.id;
  });
  return out;
}

Result<SnapshotInfo> find_info(int snapshots_dir, const std::string& display, const std::string& id) {
  PX_TRY_ASSIGN(auto all, list_infos(snapshots_dir, display));
  const SnapshotInfo* found = nullptr;
  for (const auto& info : all) {
    if (info.id == id) return info;
    if (info.id.compare(0, id.size(), id) == 0) {
      if (found != nullptr)
        return Error::invalid("Snapshot id \"" + id + "\" matches more than one snapshot in " + display +
                              "; give more of it.");
      found = &info;
    }
  }
  if (found == nullptr || id.empty())
    return Error::not_found("No snapshot \"" + id + "\" in " + display +
                            "; `parallex snapshot list --store " + display + "` shows the ids.");
  return *found;
}

Result<std::vector<Entry>> load_tree(const StoreFds& fds, const SnapshotInfo& info) {
  Objects objects(fds.objects.get(), fds.tmp.get());
  PX_TRY_ASSIGN(auto text, objects.read_verified(info.tree, "snapshot " + info.id));
  return parse_tree(text);
}

Status check_separate(const fs::path& source, const fs::path& store) {
  std::error_code ec;
  fs::path s = fs::weakly_canonical(source, ec);
  if (ec) s = normal_absolute(source);
  fs::path t = fs::weakly_canonical(store, ec);
  if (ec) t = normal_absolute(store);
  if (is_within(t, s))
    return Error::invalid("The snapshot store " + store.string() + " lies inside " + source.string() +
                          "; keep it outside the folder it snapshots, where a run cannot write.");
  if (is_within(s, t))
    return Error::invalid("The folder " + source.string() + " lies inside the snapshot store " +
                          store.string() + ".");
  return ok();
}

}  // namespace detail

Result<Store> Store::open(const fs::path& dir, bool create) {
  if (dir.empty()) return Error::invalid("No snapshot store folder was given.");
  if (create) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error::io("Could not create the snapshot store " + dir.string(), ec.value());
  }
  Store store;
  store.dir_ = dir;
  store.dirfd_.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!store.dirfd_) {
    int err = errno;
    if (err == ENOENT) return Error::not_found("There is no snapshot store at " + dir.string() + ".");
    return Error::io("Could not open the snapshot store " + dir.string(), err);
  }
  ::fchmod(store.dirfd_.get(), 0700);
  const std::string marker = "parallex-snapshot-store 1\n";
  auto existing = read_file_at(store.dirfd_.get(), "FORMAT", dir.string() + "/FORMAT");
  if (existing) {
    if (existing.value() != marker)
      return Error::unsupported(dir.string() + " is not a snapshot store this parallex understands.");
  } else {
    if (!create) return Error::not_found("There is no snapshot store at " + dir.string() + ".");
    // Under the lock: two processes making the store at once (two runs of a
    // new agent) would write the marker through the same temp name.
    PX_TRY_ASSIGN(auto lock, detail::lock_store(store.dirfd_.get(), dir));
    PX_TRY_ASSIGN(auto fds, detail::open_fds(store.dirfd_.get(), dir));
    auto made_meanwhile = read_file_at(store.dirfd_.get(), "FORMAT", dir.string() + "/FORMAT");
    if (made_meanwhile && made_meanwhile.value() != marker)
      return Error::unsupported(dir.string() + " is not a snapshot store this parallex understands.");
    if (!made_meanwhile)
      PX_TRY(
          write_file_durably(fds.tmp.get(), store.dirfd_.get(), "FORMAT", marker, dir.string() + "/FORMAT"));
  }
  PX_TRY_ASSIGN(auto fds, detail::open_fds(store.dirfd_.get(), dir));
  // Leftovers of a writer killed mid-way; only safe to remove while nobody writes.
  if (auto lock = detail::lock_store(store.dirfd_.get(), dir, std::chrono::milliseconds(0))) {
    UniqueFd dup(::openat(fds.tmp.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (DIR* d = dup ? ::fdopendir(dup.release()) : nullptr) {
      while (dirent* de = ::readdir(d)) {
        if (de->d_name[0] == '.') continue;
        ::unlinkat(fds.tmp.get(), de->d_name, 0);
      }
      ::closedir(d);
    }
  }
  return store;
}

Result<std::vector<SnapshotInfo>> Store::list() const {
  PX_TRY_ASSIGN(auto fds, detail::open_fds(dirfd_.get(), dir_));
  return detail::list_infos(fds.snapshots.get(), dir_.string());
}

Result<SnapshotInfo> Store::find(const std::string& id) const {
  PX_TRY_ASSIGN(auto fds, detail::open_fds(dirfd_.get(), dir_));
  return detail::find_info(fds.snapshots.get(), dir_.string(), id);
}

Result<PruneResult> Store::prune(std::size_t keep) {
  PX_TRY_ASSIGN(auto lock, detail::lock_store(dirfd_.get(), dir_));
  PX_TRY_ASSIGN(auto fds, detail::open_fds(dirfd_.get(), dir_));
  std::vector<std::string> unreadable;
  PX_TRY_ASSIGN(auto all, detail::list_infos(fds.snapshots.get(), dir_.string(), &unreadable));
  // A record that cannot be read still names files only it holds: sweeping
  // the objects no readable snapshot uses would delete them.
  if (!unreadable.empty()) {
    std::string names;
    for (const auto& n : unreadable) names += (names.empty() ? "" : ", ") + n;
    return Error::conflict("Nothing was pruned: the snapshot record(s) " + names + " in " + dir_.string() +
                           "/snapshots cannot be read, and pruning would delete the files they hold. Restore "
                           "them from a backup, or move them out of that folder if you no longer need them.");
  }
  PruneResult result;
  std::size_t remove = all.size() > keep ? all.size() - keep : 0;
  // Read every kept tree first: if one is damaged, delete nothing.
  std::unordered_set<std::string> live;
  for (std::size_t i = remove; i < all.size(); ++i) {
    PX_TRY_ASSIGN(auto entries, detail::load_tree(fds, all[i]));
    live.insert(all[i].tree);
    for (const auto& e : entries)
      if (!e.hash.empty()) live.insert(e.hash);
  }
  for (std::size_t i = 0; i < remove; ++i) {
    if (::unlinkat(fds.snapshots.get(), (all[i].id + ".json").c_str(), 0) != 0 && errno != ENOENT)
      return Error::io("Could not remove snapshot " + all[i].id + " from " + dir_.string(), errno);
    result.removed_ids.push_back(all[i].id);
    fault_point("prune-record-removed");
  }
  ::fsync(fds.snapshots.get());
  // Sweep every object no kept snapshot uses, including orphans of a crashed snapshot.
  for (int fan = 0; fan < 256; ++fan) {
    char sub[3];
    std::snprintf(sub, sizeof sub, "%02x", fan);
    UniqueFd sfd(::openat(fds.objects.get(), sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sfd) continue;
    DIR* d = ::fdopendir(sfd.get());
    if (d == nullptr) continue;
    int raw = sfd.release();
    while (dirent* de = ::readdir(d)) {
      if (de->d_name[0] == '.') continue;
      std::string hash = std::string(sub) + de->d_name;
      if (live.count(hash) != 0) continue;
      struct stat st {};
      if (::fstatat(raw, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        result.bytes_freed += static_cast<std::uint64_t>(st.st_blocks) * 512;
      if (::unlinkat(raw, de->d_name, 0) == 0) ++result.objects_removed;
      fault_point("prune-object-removed");
    }
    ::closedir(d);
  }
  StatCache cache;
  std::string source = all.empty() ? std::string() : all.back().source;
  cache.load(dirfd_.get(), source);
  cache.adopt_loaded();
  cache.filter([&](const std::string& h) { return live.count(h) != 0; });
  if (!all.empty()) (void)cache.save(dirfd_.get(), fds.tmp.get(), source, INT64_MAX);
  return result;
}

Result<std::uint64_t> Store::disk_usage() const {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0) total += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  if (ec) return Error::io("Could not measure the snapshot store " + dir_.string(), ec.value());
  return total;
}

}  // namespace px::snapshot
