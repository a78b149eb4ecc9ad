#include "backend/seal/overlay.hpp"

#include <fcntl.h>
#include <sys/mount.h>

#include <string>

#include "backend/seal/sys.hpp"

namespace px::seal::overlay {

namespace {

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

Result<UniqueFd> mount_layers(int lower, int upper, int work) {
  UniqueFd ctx(::fsopen("overlay", FSOPEN_CLOEXEC));
  if (!ctx) return sys_error("fsopen(overlay)");
  // /proc/self/fd/N is followed by overlayfs's own lookup to the very
  // directory opened: a name swapped since cannot redirect a layer.
  const std::string lower_path = fd_path(lower), upper_path = fd_path(upper), work_path = fd_path(work);
  if (::fsconfig(ctx.get(), FSCONFIG_SET_STRING, "lowerdir", lower_path.c_str(), 0) != 0)
    return sys_error("fsconfig(overlay) lowerdir");
  if (::fsconfig(ctx.get(), FSCONFIG_SET_STRING, "upperdir", upper_path.c_str(), 0) != 0)
    return sys_error("fsconfig(overlay) upperdir");
  if (::fsconfig(ctx.get(), FSCONFIG_SET_STRING, "workdir", work_path.c_str(), 0) != 0)
    return sys_error("fsconfig(overlay) workdir");
  if (::fsconfig(ctx.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0)
    return sys_error("fsconfig(overlay) userxattr");
  if (::fsconfig(ctx.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return sys_error("fsconfig(overlay) create");
  UniqueFd mnt(::fsmount(ctx.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
  if (!mnt) return sys_error("fsmount(overlay)");
  return mnt;
}

}  // namespace px::seal::overlay
