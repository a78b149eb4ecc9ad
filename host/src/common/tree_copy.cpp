#include "common/tree_copy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <vector>

#include "common/unique_fd.hpp"

namespace px {

namespace {

constexpr int kMaxDepth = 64;

bool copy_file_contents(int from, int to) {
  struct stat st {};
  if (::fstat(from, &st) != 0) return false;
  off_t offset = 0;
  while (offset < st.st_size) {
    const ssize_t n = ::sendfile(to, from, &offset, static_cast<std::size_t>(st.st_size - offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0;
  }
  return true;
}

}  // namespace

std::vector<std::string> names_in(int fd) {
  std::vector<std::string> out;
  const int listing = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing < 0) return out;
  DIR* dir = ::fdopendir(listing);
  if (!dir) {
    ::close(listing);
    return out;
  }
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

bool copy_entry(int src, const std::string& name, int dst, const std::string& dst_name, CopyCounts& counts) {
  struct stat st {};
  if (::fstatat(src, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  if (S_ISDIR(st.st_mode)) {
    if (::mkdirat(dst, dst_name.c_str(), st.st_mode & 0777) != 0 && errno != EEXIST) {
      ++counts.skipped;
      return false;
    }
    UniqueFd from(::openat(src, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    UniqueFd to(::openat(dst, dst_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!from || !to) {
      ++counts.skipped;
      return false;
    }
    copy_entries(from.get(), to.get(), counts, 1);
    return true;
  }
  if (S_ISREG(st.st_mode)) {
    UniqueFd from(::openat(src, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    // No setuid or setgid bit survives: only the permission bits are copied.
    UniqueFd to(::openat(dst, dst_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         st.st_mode & 0777));
    if (!from || !to || !copy_file_contents(from.get(), to.get())) {
      ++counts.skipped;
      return false;
    }
    ++counts.kept;
    return true;
  }
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(src, name.c_str(), target, sizeof target - 1);
    if (n < 0 ||
        ::symlinkat(std::string(target, static_cast<std::size_t>(n)).c_str(), dst, dst_name.c_str()) != 0) {
      ++counts.skipped;
      return false;
    }
    ++counts.kept;
    return true;
  }
  ++counts.skipped;  // fifos, sockets, devices: not files to keep
  return false;
}

void copy_entries(int src, int dst, CopyCounts& counts, int depth) {
  if (depth > kMaxDepth) {
    ++counts.skipped;
    return;
  }
  for (const auto& name : names_in(src)) {
    struct stat st {};
    if (::fstatat(src, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (::mkdirat(dst, name.c_str(), st.st_mode & 0777) != 0 && errno != EEXIST) {
        ++counts.skipped;
        continue;
      }
      UniqueFd from(::openat(src, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      UniqueFd to(::openat(dst, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!from || !to) {
        ++counts.skipped;
        continue;
      }
      copy_entries(from.get(), to.get(), counts, depth + 1);
    } else {
      copy_entry(src, name, dst, name, counts);
    }
  }
}

bool remove_entry(int dir, const std::string& name, int depth) {
  if (::unlinkat(dir, name.c_str(), 0) == 0) return true;
  if (errno != EISDIR && errno != EPERM) return false;
  if (depth > kMaxDepth) return false;
  UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!sub) return false;
  for (const auto& child : names_in(sub.get())) remove_entry(sub.get(), child, depth + 1);
  return ::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0;
}

bool is_empty_dir(int fd) {
  return names_in(fd).empty();
}

bool holds_only_folders(int fd, int depth) {
  if (depth > kMaxDepth) return false;
  for (const auto& name : names_in(fd)) {
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) return false;
    UniqueFd sub(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub || !holds_only_folders(sub.get(), depth + 1)) return false;
  }
  return true;
}

}  // namespace px
