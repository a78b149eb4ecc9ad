#include "protect/repository_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "common/beneath.hpp"
#include "common/unique_fd.hpp"

namespace px::protect {

namespace {

// The sub-folders of the folder `fd` but .git, and whether it holds a .git
// folder or a .git of another kind (a gitfile, a link: git follows both).
// getdents64 itself, not readdir(): fdopendir costs two more calls and an
// allocation a folder, a third of a read.
void read_folder(int fd, bool& repository, bool& gitfile, std::vector<std::string>& folders) {
  repository = false;
  gitfile = false;
  folders.clear();
  alignas(dirent64) char buf[16384];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + at);
      at += e->d_reclen;
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      const bool is_dir = e->d_type == DT_DIR ||
                          (e->d_type == DT_UNKNOWN &&
                           ::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode));
      if (name == ".git")
        (is_dir ? repository : gitfile) = true;
      else if (is_dir)
        folders.emplace_back(name);
    }
  }
}

}  // namespace

WalkFound find_repositories(int run_dir, const WalkBounds& bounds, WalkCache& cache) {
  WalkFound found;
  cache.begin_walk();
  // A folder with a link count of 2 holds no folder, so no .git folder and
  // nothing to walk into: one stat by name from its parent tells it, where
  // reading it costs an open, the listing and a close (most folders of a
  // tree are such leaves, and a folder's first walk has no cache to spare
  // the read).
  struct stat run_st {};
  const bool leaves_by_count = WalkCache::counts_subfolders(run_dir) && ::fstat(run_dir, &run_st) == 0;
  std::vector<std::pair<std::string, int>> queue{{std::string(), 0}};  // breadth first: (folder, depth)
  std::size_t visits = 0;
  bool skipped = false;  // a repository's folders left out on purpose: the cache keeps what it knew of them
  bool repository = false;
  bool gitfile = false;
  std::vector<std::string> folders;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (visits >= bounds.max_visits) {
      for (; i < queue.size(); ++i) found.unvisited.emplace_back(queue[i].first);
      break;
    }
    const auto [rel, depth] = queue[i];
    const bool in_cache = cache.known(rel) != nullptr;
    if (!in_cache && found.read >= bounds.max_reads) {  // it would have to be read
      found.unvisited.emplace_back(rel);
      continue;
    }
    // Each folder from the run folder, never through a link: a folder the
    // cache names that is now a link is not followed, one that is gone is
    // skipped. O_PATH for a folder the cache knows: it is likely only
    // looked at (fstat, and fstatat of its sub-folders); if it must be read
    // after all, it is opened for reading from itself (".", no name to swap).
    UniqueFd fd = open_beneath(run_dir, rel, (in_cache ? O_PATH : O_RDONLY) | O_DIRECTORY);
    if (!fd) continue;
    // Before the stat, so that whatever changes the folder after it stamps
    // a change time later than this (WalkCache::unchanged()).
    const std::int64_t read_ns = change_clock_now_ns();
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) continue;
    if (const WalkCache::Folder* known = cache.unchanged(rel, st)) {
      repository = known->repository;
      gitfile = known->gitfile;
      folders = known->folders;
      cache.visited(rel);
      ++found.cached;
    } else if (found.read >= bounds.max_reads) {
      found.unvisited.emplace_back(rel);
      continue;
    } else {
      if (in_cache) fd = UniqueFd(::openat(fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!fd) continue;
      read_folder(fd.get(), repository, gitfile, folders);
      ++found.read;
      cache.read(rel, {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                       static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec,
                       read_ns, repository, gitfile, folders});
    }
    ++visits;
    if (gitfile) found.gitfiles.emplace_back(rel);
    const bool nested = repository && !rel.empty();  // the run folder's own is not nested
    if (nested) found.repositories.emplace_back(rel);
    if (nested && !bounds.into_repositories) {
      skipped = skipped || !folders.empty();
      continue;
    }
    if (depth >= bounds.max_depth) {
      if (!folders.empty()) found.too_deep.emplace_back(rel);
      continue;
    }
    for (const auto& name : folders) {
      std::string child = rel.empty() ? name : rel + "/" + name;
      // A folder the cache knows held no folders is looked at from here, with
      // one stat by name (no link followed: AT_SYMLINK_NOFOLLOW, one name)
      // instead of an open from the run folder, a stat and a close: most
      // folders of a tree are such leaves.
      if (const WalkCache::Folder* leaf = cache.known(child);
          leaf && leaf->folders.empty() && visits < bounds.max_visits) {
        struct stat cst {};
        if (::fstatat(fd.get(), name.c_str(), &cst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cst.st_mode) &&
            cache.unchanged(child, cst) == leaf) {
          ++visits;
          ++found.cached;
          cache.visited(child);
          if (leaf->repository) found.repositories.emplace_back(child);
          if (leaf->gitfile) found.gitfiles.emplace_back(child);
          continue;
        }
      }
      if (leaves_by_count && !cache.known(child) && visits < bounds.max_visits) {
        const std::int64_t leaf_ns = change_clock_now_ns();
        struct stat cst {};
        if (::fstatat(fd.get(), name.c_str(), &cst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cst.st_mode) &&
            cst.st_dev == run_st.st_dev && cst.st_nlink == 2) {
          // It holds no folder, so no .git folder; a .git of another kind
          // (a gitfile) is one look-up by name. Nothing of the run runs
          // while a walk does (it has not started, is frozen or is over), so
          // the folder looked at by name is the one just stat'ed. Kept in
          // the cache like a folder read: the next walk's one stat of it
          // says whether anything was made in it since.
          ++visits;
          ++found.leaves;
          struct stat git {};
          const bool leaf_git = ::fstatat(fd.get(), (name + "/.git").c_str(), &git, AT_SYMLINK_NOFOLLOW) == 0;
          if (leaf_git) found.gitfiles.emplace_back(child);
          cache.read(child, {static_cast<std::uint64_t>(cst.st_dev),
                             static_cast<std::uint64_t>(cst.st_ino),
                             static_cast<std::int64_t>(cst.st_ctim.tv_sec) * 1000000000 + cst.st_ctim.tv_nsec,
                             leaf_ns,
                             false,
                             leaf_git,
                             {}});
          continue;
        }
      }
      queue.emplace_back(std::move(child), depth + 1);
    }
  }
  cache.end_walk(found.unvisited.empty() && found.too_deep.empty() && !skipped);
  std::sort(found.repositories.begin(), found.repositories.end());
  std::sort(found.gitfiles.begin(), found.gitfiles.end());
  return found;
}

}  // namespace px::protect
