#pragma once
// What the quarantine (quarantine.hpp) asks about a git dir a run could
// write: the gitlinks its index names, and whether the objects the run wrote
// hash to their names. The index and packs are read by libgit2, which reads
// a file by path: each is handed to it as /proc/self/fd/N of a descriptor the
// caller opened beneath the run folder without following a link, or from a
// folder so opened after each name in it was checked to be a plain file,
// while nothing of the run runs (it has not started, is frozen or is over).
// A loose object, what a commit writes, is inflated with zlib and hashed with
// OpenSSL: initialising libgit2 (its TLS set-up included) would cost a run
// that commits tens of milliseconds.
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::protect {

// The paths (relative to the worktree) of the gitlinks (mode 160000, a
// submodule's commit) in the index file `index_fd`: git status recurses into
// each such folder that holds a `.git`, and runs what its git dir names. An
// error when libgit2 cannot read it (git could not either).
Result<std::vector<std::string>> index_gitlinks(int index_fd);

// What an object file or pack holds that its name does not: git reads a
// loose object by its name and a packed one through the pack's index, and
// checks neither against the content when it checks out, so an object
// rewritten under the name of another is used as that other.
struct ObjectCheck {
  bool checked = false;                 // false: it could not be read through (see `problem`)
  bool too_large = false;               // not read through: larger than the bound it was given
  std::uint64_t read = 0;               // bytes read through (inflated)
  std::vector<std::string> mismatched;  // "<name> holds <actual id>", at most a few
  std::string problem;                  // why it could not be checked, or empty
};

// The loose object `name` (40 hex digits: the folder's two and the file's
// 38) in the objects folder `objects_fd`, neither followed if a link,
// inflating at most `max_bytes` (a small file can inflate to gigabytes).
ObjectCheck check_loose_object(int objects_fd, const std::string& name, std::uint64_t max_bytes);
// Every object of the pack whose index is `idx_name` in the folder `pack_fd`
// (objects/pack), reading at most `max_bytes` of objects.
ObjectCheck check_pack(int pack_fd, const std::string& idx_name, std::uint64_t max_bytes);

}  // namespace px::protect
