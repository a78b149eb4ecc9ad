#include "common/unique_fd.hpp"

#include <unistd.h>

namespace px {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

}  // namespace px
