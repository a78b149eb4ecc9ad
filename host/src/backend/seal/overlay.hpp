#pragma once
// overlayfs: one of the user's caches shown read-only beneath a folder of the
// run's own (`tool_caches: overlay`). The lower layer is the user's cache,
// which overlayfs never writes; the upper layer and its work dir lie in a
// tmpfs of the seal's own that the command never sees, so what the run adds
// or deletes there goes with the run and cannot touch the user's builds.
#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::overlay {

// A detached overlay mount (fsmount) of `lower` beneath `upper`, with `work`
// as its work dir (a directory of the same mount as `upper`), nosuid and
// nodev. All three are O_PATH descriptors of directories: the layers are the
// objects that were opened, named to overlayfs through /proc/self/fd. Inside
// a user namespace overlayfs keeps its own metadata in user.* extended
// attributes (`userxattr`), the only ones such a namespace may write.
Result<UniqueFd> mount_layers(int lower, int upper, int work);

}  // namespace px::seal::overlay
