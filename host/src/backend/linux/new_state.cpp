#include "backend/linux/new_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "common/unique_fd.hpp"

namespace px::seal {

namespace {

struct Counts {
  std::size_t kept = 0;
  std::size_t skipped = 0;  // existed already, or not a file, dir or link
};

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

// Copies the entries of `src` into `dst` (both directory fds). Every name is
// opened with O_NOFOLLOW: a link the run made is copied as a link, never
// followed, and nothing in `dst` is replaced.
void copy_entries(int src, int dst, Counts& counts, int depth) {
  if (depth > 64) {
    ++counts.skipped;
    return;
  }
  const int listing = ::openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing < 0) return;
  DIR* dir = ::fdopendir(listing);
  if (!dir) {
    ::close(listing);
    return;
  }
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
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
    } else if (S_ISREG(st.st_mode)) {
      UniqueFd from(::openat(src, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      // No setuid or setgid bit survives: only the permission bits are copied.
      UniqueFd to(::openat(dst, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           st.st_mode & 0777));
      if (!from || !to || !copy_file_contents(from.get(), to.get())) {
        ++counts.skipped;
        continue;
      }
      ++counts.kept;
    } else if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = ::readlinkat(src, name.c_str(), target, sizeof target - 1);
      if (n < 0 ||
          ::symlinkat(std::string(target, static_cast<std::size_t>(n)).c_str(), dst, name.c_str()) != 0) {
        ++counts.skipped;
        continue;
      }
      ++counts.kept;
    } else {
      ++counts.skipped;  // fifos, sockets, devices: not state to keep
    }
  }
  ::closedir(dir);
}

bool is_empty_dir(int fd) {
  const int listing = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing < 0) return true;
  DIR* dir = ::fdopendir(listing);
  if (!dir) {
    ::close(listing);
    return true;
  }
  bool empty = true;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

// Opens `target` as a directory, making the missing components (0700) below
// its deepest existing ancestor. The existing ancestors are the user's own
// (the run could not write there); the components made here are opened
// without following links.
UniqueFd open_or_make_dir(const fs::path& target) {
  fs::path existing = target;
  std::vector<std::string> missing;
  while (!existing.empty() && existing != existing.root_path() && ::access(existing.c_str(), F_OK) != 0) {
    missing.push_back(existing.filename().string());
    existing = existing.parent_path();
  }
  UniqueFd cur(::open(existing.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (auto it = missing.rbegin(); cur && it != missing.rend(); ++it) {
    if (::mkdirat(cur.get(), it->c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
    cur = UniqueFd(::openat(cur.get(), it->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return cur;
}

}  // namespace

std::vector<std::string> keep_new_state(const std::vector<NewStateDir>& dirs) {
  std::vector<std::string> notes;
  for (const auto& d : dirs) {
    UniqueFd backing(::open(d.backing.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!backing || is_empty_dir(backing.get())) continue;
    UniqueFd target = open_or_make_dir(d.target);
    if (!target) {
      notes.push_back("what the run wrote in " + d.target.string() +
                      " (which did not exist before it) was not kept: " + "the folder cannot be made (" +
                      std::string(std::strerror(errno)) + ")");
      continue;
    }
    Counts counts;
    copy_entries(backing.get(), target.get(), counts, 0);
    std::string line = "kept what the run wrote in " + d.target.string() +
                       " (it did not exist before the run): " + std::to_string(counts.kept) + " file" +
                       (counts.kept == 1 ? "" : "s");
    if (counts.skipped)
      line += ", " + std::to_string(counts.skipped) + " left out (already there, or not a file)";
    notes.push_back(line);
  }
  return notes;
}

}  // namespace px::seal
