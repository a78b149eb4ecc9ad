#include "common/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.hpp"

namespace px {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

Result<std::string> read_regular_file(const std::filesystem::path& file, ReadLimits limits) {
  const std::string name = file.string();
  // O_NONBLOCK: opening a FIFO with no writer returns at once (and fstat below
  // refuses it); it changes nothing for a regular file.
  const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (limits.follow_links ? 0 : O_NOFOLLOW);
  UniqueFd fd(::open(file.c_str(), flags));
  if (!fd) {
    if (errno == ENOENT) return Error::not_found(name + " does not exist");
    if (errno == ELOOP && !limits.follow_links)
      return Error::invalid(name + " is a symbolic link, not a file");
    return Error::io("cannot read " + name, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::io("cannot read " + name, errno);
  if (!S_ISREG(st.st_mode))
    return Error::invalid(name + " is " + kind_of(st.st_mode) + ", not a regular file");
  const auto too_large = [&] {
    return Error::invalid(name + " is larger than " + std::to_string(limits.max_bytes / 1024) +
                          " KiB, more than such a file holds");
  };
  if (static_cast<std::size_t>(st.st_size) > limits.max_bytes) return too_large();
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::io("cannot read " + name, errno);
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    // A file that grows while it is read (or whose size lies) stops at the limit.
    if (out.size() > limits.max_bytes) return too_large();
  }
  return out;
}

}  // namespace px
