#pragma once
// A path beneath the run folder, opened from the run folder's descriptor
// without following a link: what the quarantine and the walk for
// repositories reach every file and folder of the run folder with.
#include <filesystem>

#include "common/unique_fd.hpp"

namespace px::supervisor {

// `rel` beneath the run folder `run_dir` (a descriptor), never through a link
// (RESOLVE_NO_SYMLINKS), never out of it (RESOLVE_BENEATH). O_NOFOLLOW: a link
// at the end is opened as the link itself (with O_PATH) or refused. "" is the
// run folder itself. An invalid descriptor when it cannot be opened.
UniqueFd open_beneath(int run_dir, const std::filesystem::path& rel, int flags);

}  // namespace px::supervisor
