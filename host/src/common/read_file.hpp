#pragma once
// Reads a whole file that a person or another program named: a profile, a
// project's config or token, an agent's rules. Only a regular file is read, and
// at most `max_bytes` of it: a FIFO, a device (/dev/zero), a folder or
// /proc/self/mem named by mistake, or by a hostile repository, is refused at
// once, never waited on or read until memory runs out. It is opened without
// blocking, so a FIFO with no writer cannot hang the caller either.
#include <cstddef>
#include <filesystem>
#include <string>

#include "common/error.hpp"

namespace px {

struct ReadLimits {
  std::size_t max_bytes = 1 << 20;
  bool follow_links = true;  // false: a symbolic link at the name is refused (O_NOFOLLOW)
};

// Errors name the file: not_found when it is missing; invalid when it is not
// a regular file (saying what it is) or larger than the limit; io otherwise.
Result<std::string> read_regular_file(const std::filesystem::path& file, ReadLimits limits = {});

}  // namespace px
