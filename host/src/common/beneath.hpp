#pragma once
// A path beneath a folder, opened from the folder's descriptor without
// following a link: what the quarantine and the walk for repositories reach
// every file and folder of a run folder with, and what `workspace rm` removes
// a workspace through (a folder a run could write, so a link it planted must
// never lead the removal elsewhere).
#include <filesystem>

#include "common/unique_fd.hpp"

namespace px {

// `rel` beneath the run folder `run_dir` (a descriptor), never through a link
// (RESOLVE_NO_SYMLINKS), never out of it (RESOLVE_BENEATH). O_NOFOLLOW: a link
// at the end is opened as the link itself (with O_PATH) or refused. "" is the
// run folder itself. An invalid descriptor when it cannot be opened.
UniqueFd open_beneath(int run_dir, const std::filesystem::path& rel, int flags);

}  // namespace px
