#include "backend/seal/sys.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace px::seal {

const char* errno_name(int err) {
  switch (err) {
#define PX_ERRNO(e) \
  case e:           \
    return #e;
    PX_ERRNO(EPERM)
    PX_ERRNO(ENOENT) PX_ERRNO(ESRCH) PX_ERRNO(EINTR) PX_ERRNO(EIO) PX_ERRNO(ENXIO) PX_ERRNO(E2BIG)
        PX_ERRNO(ENOEXEC) PX_ERRNO(EBADF) PX_ERRNO(ECHILD) PX_ERRNO(EAGAIN) PX_ERRNO(ENOMEM) PX_ERRNO(EACCES)
            PX_ERRNO(EFAULT) PX_ERRNO(EBUSY) PX_ERRNO(EEXIST) PX_ERRNO(EXDEV) PX_ERRNO(ENODEV)
                PX_ERRNO(ENOTDIR) PX_ERRNO(EISDIR) PX_ERRNO(EINVAL) PX_ERRNO(ENFILE) PX_ERRNO(EMFILE)
                    PX_ERRNO(ENOTTY) PX_ERRNO(ETXTBSY) PX_ERRNO(EFBIG) PX_ERRNO(ENOSPC) PX_ERRNO(ESPIPE)
                        PX_ERRNO(EROFS) PX_ERRNO(EMLINK) PX_ERRNO(EPIPE) PX_ERRNO(ERANGE)
                            PX_ERRNO(ENAMETOOLONG) PX_ERRNO(ENOSYS) PX_ERRNO(ENOTEMPTY) PX_ERRNO(ELOOP)
                                PX_ERRNO(ENOTSOCK) PX_ERRNO(EADDRINUSE) PX_ERRNO(EADDRNOTAVAIL)
                                    PX_ERRNO(ENETDOWN) PX_ERRNO(ENETUNREACH) PX_ERRNO(ECONNRESET)
                                        PX_ERRNO(ECONNREFUSED) PX_ERRNO(EHOSTUNREACH) PX_ERRNO(ETIMEDOUT)
                                            PX_ERRNO(EOPNOTSUPP) PX_ERRNO(EAFNOSUPPORT)
                                                PX_ERRNO(EPROTONOSUPPORT)
#undef PX_ERRNO
                                                    default : return "E?";
  }
}

Error sys_error(const std::string& what, int err) {
  return Error{ErrorKind::io, what + ": " + std::strerror(err) + " (" + errno_name(err) + ")"};
}
Error sys_error(const std::string& what) {
  return sys_error(what, errno);
}

int sys_openat2(int dirfd, const char* path, const open_how& how) {
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

Status write_file(const char* path, const std::string& text) {
  UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
  if (!fd) return sys_error(std::string("open ") + path);
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return sys_error(std::string("write '") + text + "' to " + path);
  return ok();
}

}  // namespace px::seal
