#pragma once
// Filesystem primitives that never follow a link below a root: everything the
// rewind writes is reached from a directory fd with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), or, where openat2 is missing,
// one O_NOFOLLOW component at a time.
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::snapshot {

// Opens `rel` ("" = the root itself) below `root` without following any link.
// `flags` are open(2) flags; O_NOFOLLOW and O_CLOEXEC are added. Sets errno and
// returns an invalid fd on failure (ELOOP/EXDEV when a link was in the way).
UniqueFd open_beneath(int root, std::string_view rel, int flags, unsigned mode = 0);
// Tests force the per-component fallback with PARALLEX_TEST_NO_OPENAT2=1.
bool openat2_available();

std::string_view parent_of(std::string_view rel);  // "" for a top-level name
std::string_view name_of(std::string_view rel);

// Writes `data` to <dir>/<name> via a temp file in `tmpdir`: write, fsync,
// renameat, fsync `dir`. A crash leaves the old file or the new one.
Status write_file_durably(int tmpdir, int dir, const std::string& name, std::string_view data,
                          const std::string& display);
Result<std::string> read_file_at(int dir, const std::string& name, const std::string& display);

std::string random_hex(std::size_t bytes);
std::int64_t now_ns();
std::int64_t mtime_ns(const struct stat& st);
std::int64_t ctime_ns(const struct stat& st);
char type_of(mode_t mode);  // f d l p s c b, or '?'

}  // namespace px::snapshot
