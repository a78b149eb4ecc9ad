#include "protect/walk_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/sha256.hpp"
#include "common/unique_fd.hpp"

namespace px::protect {

namespace {

// The file: the magic (its format; a file of another format is ignored), the
// SHA-256 of the rest in hex (a torn or damaged file is ignored), then the
// run folder (identity and path) and its folders, integers in the machine's
// own byte order (the file never leaves it; another order fails the magic's
// check of the first integer's value instead of being misread).
// 02: a .git that is not a folder is kept too, and the index's gitlinks.
constexpr std::string_view kMagic = "PXWALK02";
constexpr std::size_t kDigest = 64;
constexpr std::uint32_t kOrderMark = 0x01020304;
// A larger file is not read (kMaxFolders folders with long names fit).
constexpr std::size_t kMaxFileBytes = 64u << 20;

// The kernel stamps a change time from CLOCK_REALTIME_COARSE, which moves
// once a tick (1 to 10 ms, whatever HZ), cut to what the filesystem keeps.
// An entry made after a walk read a folder but in the same tick as the
// folder's stat leaves the change time the walk recorded as it was: the walk
// missed the entry and the change time says nothing changed (git's "racy"
// index entries). A folder is trusted only when the change time recorded was
// already older than the moment of the read by more than any tick: whatever
// changed the folder after the read stamped a later time. 50 ms is five
// jiffies at HZ=100; a filesystem that keeps whole seconds (ext4 with small
// inodes) shows a change time without its sub-second part, and gets two
// seconds.
constexpr std::uint64_t kTickMargin = 50'000'000;
constexpr std::uint64_t kWholeSecondsMargin = 2'000'000'000;

std::int64_t ctime_of(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
}

// One name of a folder: what getdents can return but "." and "..".
bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

// "" or names joined by '/': never absolute, never a step up.
bool valid_rel(std::string_view rel) {
  if (rel.empty()) return true;
  if (rel.size() > 4096) return false;
  for (std::size_t at = 0;;) {
    const std::size_t slash = rel.find('/', at);
    if (!valid_name(rel.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at)))
      return false;
    if (slash == std::string_view::npos) return true;
    at = slash + 1;
  }
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  bool get(T& out) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  template <class Length>
  bool text(std::string& out) {
    Length n = 0;
    if (!get(n) || bytes_.size() - at_ < n) return false;
    out.assign(bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <class Length>
void put_text(std::string& out, const std::string& text) {
  put(out, static_cast<Length>(text.size()));
  out += text;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         ctime_of(a) == ctime_of(b);
}

}  // namespace

std::int64_t change_clock_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {

// The filesystem of `fd` (statfs's f_type), 0 when unknown.
unsigned long filesystem_of(int fd) {
  struct statfs sfs {};
  return ::fstatfs(fd, &sfs) == 0 ? static_cast<unsigned long>(sfs.f_type) : 0;
}

}  // namespace

bool WalkCache::counts_subfolders(int fd) {
  switch (filesystem_of(fd)) {
    case 0xEF53:      // ext2, ext3, ext4 (until a folder holds 65,000 folders: then 1)
    case 0x58465342:  // xfs
    case 0x01021994:  // tmpfs
      return true;
    default:
      return false;
  }
}

bool WalkCache::trusts_change_times(int fd) {
  // Network filesystems (attribute caches), FUSE (whatever the daemon says),
  // overlayfs (a folder's times come from one layer or another) are not
  // among them: there every walk reads every folder.
  switch (filesystem_of(fd)) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // xfs
    case 0x9123683E:  // btrfs
    case 0x01021994:  // tmpfs
    case 0xF2F52010:  // f2fs
    case 0xCA451A4E:  // bcachefs
    case 0x2FC12FC1:  // zfs
      return true;
    default:
      return false;
  }
}

WalkCache WalkCache::empty(const fs::path& dir, const fs::path& run_folder, int run_dir) {
  WalkCache c;
  struct stat st {};
  if (dir.empty() || run_dir < 0 || ::fstat(run_dir, &st) != 0 || !trusts_change_times(run_dir)) return c;
  c.enabled_ = true;
  c.dir_ = dir;
  c.run_folder_ = run_folder.string();
  c.file_ = dir / (sha256_hex(c.run_folder_).substr(0, 32) + ".walk");
  c.run_dev_ = st.st_dev;
  c.run_ino_ = st.st_ino;
  return c;
}

WalkCache WalkCache::fresh(const fs::path& dir, const fs::path& run_folder, int run_dir) {
  WalkCache c = empty(dir, run_folder, run_dir);
  c.dirty_ = c.enabled_;  // saved even when it finds what the file says: it replaces the file
  return c;
}

WalkCache WalkCache::load(const fs::path& dir, const fs::path& run_folder, int run_dir) {
  WalkCache c = empty(dir, run_folder, run_dir);
  if (!c.enabled_) return c;
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);  // save() makes the folder, not its parents
  UniqueFd fd(::open(c.file_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return c;
  struct stat st {};
  // Only a file of this user's that nobody else may write: anything else is
  // not this cache (and is replaced by save()).
  c.dirty_ = true;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 022) != 0 || static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes)
    return c;
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != bytes.size() || !c.parse(bytes)) {
    c.folders_.clear();
    return c;
  }
  c.dirty_ = false;
  c.file_stat_ = st;
  return c;
}

bool WalkCache::parse(const std::string& bytes) {
  if (bytes.size() < kMagic.size() + kDigest || std::string_view(bytes).substr(0, kMagic.size()) != kMagic)
    return false;
  const std::string_view body = std::string_view(bytes).substr(kMagic.size() + kDigest);
  if (sha256_hex(body) != std::string_view(bytes).substr(kMagic.size(), kDigest)) return false;
  Reader r(body);
  std::uint32_t order = 0, count = 0;
  std::uint64_t dev = 0, ino = 0;
  std::string path;
  if (!r.get(order) || order != kOrderMark || !r.get(dev) || !r.get(ino) || !r.text<std::uint32_t>(path) ||
      !r.get(count))
    return false;
  // Written for another folder (a hash shared, a folder replaced by another
  // of the same name): not this one's.
  if (dev != run_dev_ || ino != run_ino_ || path != run_folder_ || count > kMaxFolders) return false;
  folders_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string rel;
    Folder f;
    std::uint8_t git = 0;  // bit 0: a .git folder; bit 1: a .git that is not one
    std::uint32_t names = 0;
    if (!r.text<std::uint32_t>(rel) || !valid_rel(rel) || !r.get(f.dev) || !r.get(f.ino) ||
        !r.get(f.ctime_ns) || !r.get(f.read_ns) || !r.get(git) || git > 2 || !r.get(names) ||
        names > bytes.size())
      return false;
    f.repository = (git & 1) != 0;
    f.gitfile = (git & 2) != 0;
    f.folders.resize(names);
    for (auto& name : f.folders)
      if (!r.text<std::uint16_t>(name) || !valid_name(name)) return false;
    if (!folders_.emplace(std::move(rel), Entry{std::move(f), 0}).second) return false;
  }
  std::uint8_t has = 0;
  if (!r.get(has) || has > 1) return false;
  if (has == 1) {
    std::uint32_t links = 0;
    if (!r.get(index_.dev) || !r.get(index_.ino) || !r.get(index_.ctime_ns) || !r.get(index_.read_ns) ||
        !r.get(links) || links > kMaxGitlinks)
      return false;
    index_.folders.resize(links);
    for (auto& link : index_.folders)
      if (!r.text<std::uint16_t>(link) || !valid_rel(link) || link.empty()) return false;
    has_gitlinks_ = true;
  }
  return r.done();
}

std::string WalkCache::serialize() const {
  std::string body;
  put(body, kOrderMark);
  put(body, run_dev_);
  put(body, run_ino_);
  put_text<std::uint32_t>(body, run_folder_);
  put(body, static_cast<std::uint32_t>(folders_.size()));
  for (const auto& [rel, entry] : folders_) {
    const Folder& f = entry.folder;
    put_text<std::uint32_t>(body, rel);
    put(body, f.dev);
    put(body, f.ino);
    put(body, f.ctime_ns);
    put(body, f.read_ns);
    put(body, static_cast<std::uint8_t>((f.repository ? 1 : 0) | (f.gitfile ? 2 : 0)));
    put(body, static_cast<std::uint32_t>(f.folders.size()));
    for (const auto& name : f.folders) put_text<std::uint16_t>(body, name);
  }
  put(body, static_cast<std::uint8_t>(has_gitlinks_));
  if (has_gitlinks_) {
    put(body, index_.dev);
    put(body, index_.ino);
    put(body, index_.ctime_ns);
    put(body, index_.read_ns);
    put(body, static_cast<std::uint32_t>(index_.folders.size()));
    for (const auto& path : index_.folders) put_text<std::uint16_t>(body, path);
  }
  return std::string(kMagic) + sha256_hex(body) + body;
}

const WalkCache::Folder* WalkCache::unchanged(const std::string& rel, const struct stat& st) const {
  if (!enabled_) return nullptr;
  const auto it = folders_.find(rel);
  if (it == folders_.end()) return nullptr;
  const Folder& f = it->second.folder;
  // A filesystem mounted inside the run folder: its change times are not
  // vouched for (trusts_change_times() looked at the run folder's).
  if (st.st_dev != run_dev_) return nullptr;
  if (f.dev != st.st_dev || f.ino != st.st_ino || f.ctime_ns != ctime_of(st)) return nullptr;
  const std::uint64_t margin = f.ctime_ns % 1000000000 == 0 ? kWholeSecondsMargin : kTickMargin;
  if (f.ctime_ns > f.read_ns ||
      static_cast<std::uint64_t>(f.read_ns) - static_cast<std::uint64_t>(f.ctime_ns) < margin)
    return nullptr;
  return &f;
}

const std::vector<std::string>* WalkCache::gitlinks(const struct stat& st) const {
  if (!enabled_ || !has_gitlinks_ || st.st_dev != run_dev_) return nullptr;
  const Folder& f = index_;
  if (f.dev != st.st_dev || f.ino != st.st_ino || f.ctime_ns != ctime_of(st)) return nullptr;
  const std::uint64_t margin = f.ctime_ns % 1000000000 == 0 ? kWholeSecondsMargin : kTickMargin;
  if (f.ctime_ns > f.read_ns ||
      static_cast<std::uint64_t>(f.read_ns) - static_cast<std::uint64_t>(f.ctime_ns) < margin)
    return nullptr;
  return &f.folders;
}

void WalkCache::set_gitlinks(const struct stat& st, std::int64_t read_ns, std::vector<std::string> paths) {
  if (!enabled_) return;
  // Paths a gitlink may not have (git refuses them too) and more than fit are not kept.
  std::erase_if(paths, [](const std::string& p) { return p.empty() || p.size() > 4096 || !valid_rel(p); });
  if (paths.size() > kMaxGitlinks) {
    if (has_gitlinks_) dirty_ = true;
    has_gitlinks_ = false;
    return;
  }
  Folder f{static_cast<std::uint64_t>(st.st_dev),
           static_cast<std::uint64_t>(st.st_ino),
           ctime_of(st),
           read_ns,
           false,
           false,
           std::move(paths)};
  if (has_gitlinks_ && f == index_) return;
  index_ = std::move(f);
  has_gitlinks_ = true;
  dirty_ = true;
}

const WalkCache::Folder* WalkCache::known(const std::string& rel) const {
  if (!enabled_) return nullptr;
  const auto it = folders_.find(rel);
  return it == folders_.end() ? nullptr : &it->second.folder;
}

void WalkCache::begin_walk() {
  ++walk_;
}

void WalkCache::read(const std::string& rel, Folder folder) {
  if (!enabled_) return;
  auto& entry = folders_[rel];
  if (!(entry.folder == folder)) {
    entry.folder = std::move(folder);
    dirty_ = true;
  }
  entry.walk = walk_;
}

void WalkCache::visited(const std::string& rel) {
  if (const auto it = folders_.find(rel); it != folders_.end()) it->second.walk = walk_;
}

void WalkCache::end_walk(bool complete) {
  if (!enabled_) return;
  // Kept when the walk did not see them (a walk two levels deep, one that
  // stopped at its bound) unless there are too many: each is checked against
  // its folder's change time before it is used anyway.
  if (!complete && folders_.size() <= kMaxFolders) return;
  for (auto it = folders_.begin(); it != folders_.end();) {
    if (it->second.walk != walk_) {
      it = folders_.erase(it);
      dirty_ = true;
    } else {
      ++it;
    }
  }
}

Status WalkCache::save() {
  if (!enabled_) return ok();
  if (!dirty_) {
    struct stat st {};
    const bool exists = ::lstat(file_.c_str(), &st) == 0;
    if (exists ? (file_stat_.st_ino != 0 && same_file(st, file_stat_)) : file_stat_.st_ino == 0) return ok();
  }
  const std::string bytes = serialize();
  if (bytes.size() > kMaxFileBytes) return ok();  // the next walk reads what this one could not keep
  // The folder only, never its parents: load() made them at the run's
  // start. Gone now (the user removed Parallex's state, or a test its
  // folder, while the watchdog finished the run), there is nothing to keep
  // the cache in, and nothing is made again.
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    if (errno == ENOENT) return ok();
    return Error::io("make the folder of the walk caches " + dir_.string(), errno);
  }
  UniqueFd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return Error::io("open the folder of the walk caches " + dir_.string(), errno);
  const std::string name = file_.filename().string();
  const std::string tmp = name + "." + std::to_string(::getpid()) + ".tmp";
  UniqueFd out(::openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out) return Error::io("write the walk cache " + (dir_ / tmp).string(), errno);
  for (std::size_t written = 0; written < bytes.size();) {
    const ssize_t n = ::write(out.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::unlinkat(dir.get(), tmp.c_str(), 0);
      return Error::io("write the walk cache " + (dir_ / tmp).string(), err);
    }
    written += static_cast<std::size_t>(n);
  }
  out.reset();
  if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    return Error::io("replace the walk cache " + file_.string(), err);
  }
  if (::fstatat(dir.get(), name.c_str(), &file_stat_, AT_SYMLINK_NOFOLLOW) != 0) file_stat_ = {};
  dirty_ = false;
  forget_least_recent(dir.get());
  return ok();
}

void WalkCache::forget_least_recent(int dir) {
  // One file per run folder would pile up for ever: the folders walked
  // longest ago go past kMaxFiles (a forgotten one is walked in full once).
  DIR* d = ::fdopendir(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (!d) return;
  std::vector<std::pair<std::int64_t, std::string>> files;
  while (const dirent* e = ::readdir(d)) {
    struct stat st {};
    if (e->d_name[0] == '.' || ::fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    files.emplace_back(st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec, e->d_name);
  }
  ::closedir(d);
  if (files.size() <= kMaxFiles) return;
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i + kMaxFiles < files.size(); ++i) ::unlinkat(dir, files[i].second.c_str(), 0);
}

}  // namespace px::protect
