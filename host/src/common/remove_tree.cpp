#include "common/remove_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "common/unique_fd.hpp"

namespace px {
namespace {

// Descriptors held at once by one removal (one per level walked).
constexpr int kMaxDepth = 32;

UniqueFd open_dir_at(int parent, const std::string& name) {
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(parent, name.c_str(), flags));
  if (!fd && errno == EACCES) {
    // A folder the run made unreadable to itself: ours, so opened up first.
    (void)!::fchmodat(parent, name.c_str(), 0700, 0);
    fd = UniqueFd(::openat(parent, name.c_str(), flags));
  }
  return fd;
}

bool is_dir_at(int dir, const char* name, unsigned char type) {
  if (type != DT_UNKNOWN) return type == DT_DIR;
  struct stat st {};
  return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

struct Walk {
  int top = -1;                    // the folder being removed
  std::vector<std::string> later;  // folders moved up into `top`, removed after
  unsigned moved = 0;
  int error = 0;
};

// Empties the folder `dir` (at `depth` below the top), removing what it holds.
void empty_dir(Walk& w, int dir, int depth) {
  // fdopendir takes the descriptor: a copy, so `dir` stays the caller's.
  DIR* d = ::fdopendir(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (!d) {
    w.error = errno;
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (!is_dir_at(dir, e->d_name, e->d_type)) {
      if (::unlinkat(dir, e->d_name, 0) != 0 && errno != ENOENT) w.error = errno;
      continue;
    }
    subdirs.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : subdirs) {
    if (depth >= kMaxDepth) {
      // Deeper than the descriptors we hold: moved up into the top folder
      // (same filesystem, by descriptor) and removed from there later.
      // RENAME_NOREPLACE: a name the run chose there is never replaced.
      for (;;) {
        const std::string up = ".px-remove-" + std::to_string(w.moved++);
        if (::renameat2(dir, name.c_str(), w.top, up.c_str(), RENAME_NOREPLACE) == 0) {
          w.later.push_back(up);
        } else if (errno == EEXIST) {
          continue;
        } else {
          w.error = errno;
        }
        break;
      }
      continue;
    }
    UniqueFd sub = open_dir_at(dir, name);
    if (!sub) {
      if (errno != ENOENT) w.error = errno;
      continue;
    }
    empty_dir(w, sub.get(), depth + 1);
    sub.reset();
    if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) w.error = errno;
  }
}

}  // namespace

Status remove_tree_at(int parent_fd, const std::string& name) {
  struct stat st {};
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? ok() : Error::io("remove " + name, errno);
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent_fd, name.c_str(), 0) != 0 && errno != ENOENT)
      return Error::io("remove " + name, errno);
    return ok();
  }
  UniqueFd top = open_dir_at(parent_fd, name);
  if (!top) return Error::io("open " + name + " to remove it", errno);
  Walk w;
  w.top = top.get();
  empty_dir(w, top.get(), 1);
  while (!w.later.empty()) {
    const std::string next = w.later.back();
    w.later.pop_back();
    UniqueFd sub = open_dir_at(top.get(), next);
    if (!sub) continue;
    empty_dir(w, sub.get(), 2);
    sub.reset();
    if (::unlinkat(top.get(), next.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) w.error = errno;
  }
  top.reset();
  if (::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return Error::io("remove " + name, errno);
  if (w.error) return Error::io("remove everything in " + name, w.error);
  return ok();
}

}  // namespace px
