#include "backend/linux/new_state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/tree_copy.hpp"
#include "common/unique_fd.hpp"

namespace px::seal {

namespace {

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
    CopyCounts counts;
    copy_entries(backing.get(), target.get(), counts);
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
