#include "common/replace_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.hpp"

namespace px {

Status replace_file(const std::filesystem::path& file, std::string_view bytes) {
  const std::filesystem::path tmp = file.parent_path() / ("." + file.filename().string() + ".tmp");
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return Error::io("write " + tmp.string(), errno);
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::unlink(tmp.c_str());
      return Error::io("write " + tmp.string(), err);
    }
    done += static_cast<std::size_t>(n);
  }
  fd.reset();
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Error::io("write " + file.string(), err);
  }
  return ok();
}

}  // namespace px
