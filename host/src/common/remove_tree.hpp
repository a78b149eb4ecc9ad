#pragma once
// Removes a folder and everything in it through descriptors: each level is
// opened from its parent's descriptor with O_NOFOLLOW, so a symbolic link is
// removed as a link, never followed, and a folder renamed or swapped for a
// link meanwhile cannot send the removal elsewhere. For folders a run could
// write (its private temp dir): however deep the run nested them, the number
// of descriptors open at once stays bounded (deeper folders are moved up
// into the top one first and removed from there).
#include <string>

#include "common/error.hpp"

namespace px {

// Removes `name` in the folder `parent_fd` (and all it holds). A name that is
// not a folder is unlinked; one that is not there is fine.
Status remove_tree_at(int parent_fd, const std::string& name);

}  // namespace px
