#include "snapshot/safe_fs.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

namespace px::snapshot {

bool openat2_available() {
  const char* force = std::getenv("PARALLEX_TEST_NO_OPENAT2");
  if (force != nullptr && *force == '1') return false;
  static const bool available = [] {
    struct open_how how {};
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    long fd = ::syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
    if (fd >= 0) ::close(static_cast<int>(fd));
    return !(fd < 0 && errno == ENOSYS);
  }();
  return available;
}

UniqueFd open_beneath(int root, std::string_view rel, int flags, unsigned mode) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (rel.empty()) return UniqueFd(::openat(root, ".", flags & ~O_NOFOLLOW, mode));
  std::string path(rel);
  // Paths longer than the kernel takes in one call (deep homes exceed PATH_MAX)
  // are opened a slice at a time, each slice beneath the folder the last one opened.
  constexpr std::size_t kSlice = 2048;
  if (path.size() > kSlice) {
    std::size_t cut = path.rfind('/', kSlice);
    if (cut == std::string::npos || cut == 0) {
      errno = ENAMETOOLONG;
      return UniqueFd();
    }
    UniqueFd mid = open_beneath(root, path.substr(0, cut), O_RDONLY | O_DIRECTORY);
    if (!mid) return mid;
    return open_beneath(mid.get(), std::string_view(path).substr(cut + 1), flags, mode);
  }
  if (openat2_available()) {
    struct open_how how {};
    how.flags = static_cast<std::uint64_t>(flags);
    how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, root, path.c_str(), &how, sizeof how);
    return UniqueFd(static_cast<int>(fd));
  }
  // Fallback: one component at a time, each O_NOFOLLOW, ".." refused; checking
  // only the last component would let a swapped-in parent link through.
  UniqueFd cur(::openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cur) return cur;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    std::string comp = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (comp.empty() || comp == "." || comp == "..") {
      errno = EXDEV;
      return UniqueFd();
    }
    if (slash == std::string::npos) return UniqueFd(::openat(cur.get(), comp.c_str(), flags, mode));
    UniqueFd next(::openat(cur.get(), comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return next;
    cur = std::move(next);
    start = slash + 1;
  }
}

std::string_view parent_of(std::string_view rel) {
  auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : rel.substr(0, slash);
}

std::string_view name_of(std::string_view rel) {
  auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

Status write_file_durably(int tmpdir, int dir, const std::string& name, std::string_view data,
                          const std::string& display) {
  std::string tmp = "w-" + random_hex(8);
  UniqueFd fd(::openat(tmpdir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) return Error::io("Could not create a temporary file for " + display, errno);
  auto fail = [&](int err) {
    ::unlinkat(tmpdir, tmp.c_str(), 0);
    return Error::io("Could not write " + display, err);
  };
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail(errno);
  fd.reset();
  if (::renameat(tmpdir, tmp.c_str(), dir, name.c_str()) != 0) return fail(errno);
  if (::fsync(dir) != 0) return Error::io("Could not flush the folder of " + display, errno);
  return ok();
}

Result<std::string> read_file_at(int dir, const std::string& name, const std::string& display) {
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    int err = errno;
    if (err == ENOENT) return Error::not_found(display + " does not exist.");
    return Error::io("Could not open " + display, err);
  }
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::io("Could not read " + display, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string random_hex(std::size_t bytes) {
  static const char* hex = "0123456789abcdef";
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  std::string out;
  for (unsigned char c : raw) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

std::int64_t now_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}
std::int64_t ctime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
}

char type_of(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return 'f';
    case S_IFDIR:
      return 'd';
    case S_IFLNK:
      return 'l';
    case S_IFIFO:
      return 'p';
    case S_IFSOCK:
      return 's';
    case S_IFCHR:
      return 'c';
    case S_IFBLK:
      return 'b';
    default:
      return '?';
  }
}

}  // namespace px::snapshot
