#include "common/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace px {

UniqueFd open_beneath(int run_dir, const std::filesystem::path& rel, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string path = rel.empty() ? "." : rel.string();
  // EAGAIN: a rename elsewhere in the filesystem raced the lookup; try again.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const long fd = ::syscall(SYS_openat2, run_dir, path.c_str(), &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    if (errno != EAGAIN) break;
  }
  return UniqueFd();
}

}  // namespace px
