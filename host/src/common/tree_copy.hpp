#pragma once
// Copying and removing a tree of the user's files without ever following a
// link: a link is copied as a link, and nothing it points to is read,
// written or removed. Used where a run's files are carried out of its view
// (new harness state) or moved aside (quarantine).
#include <cstddef>
#include <string>
#include <vector>

namespace px {

struct CopyCounts {
  std::size_t kept = 0;
  std::size_t skipped = 0;  // existed already, or not a file, folder or link
};

// Copies the entries of the directory `src` into the directory `dst` (both
// fds). Nothing in `dst` is replaced; only permission bits are copied (no
// setuid); fifos, sockets and devices are skipped.
void copy_entries(int src, int dst, CopyCounts& counts, int depth = 0);
// Copies the entry `name` of `src_dir` to `dst_name` in `dst_dir`.
bool copy_entry(int src_dir, const std::string& name, int dst_dir, const std::string& dst_name,
                CopyCounts& counts);
// Removes the entry `name` of `dir` and, for a folder, everything in it.
bool remove_entry(int dir, const std::string& name, int depth = 0);
// The names in the directory `dir_fd` (without . and ..), sorted.
std::vector<std::string> names_in(int dir_fd);
// A directory holding nothing.
bool is_empty_dir(int fd);
// A directory holding no file, link or other entry, only (empty) folders.
bool holds_only_folders(int fd, int depth = 0);

}  // namespace px
