#pragma once
// Writes a whole file so that a reader sees the old one or the new one, never
// a part: into `.NAME.tmp` beside it, then renamed over it. The file is made
// 0600 (every file written this way is parallex's own state) and never
// written through a link (O_NOFOLLOW on the temp name).
#include <filesystem>
#include <string_view>

#include "common/error.hpp"

namespace px {

Status replace_file(const std::filesystem::path& file, std::string_view bytes);

}  // namespace px
