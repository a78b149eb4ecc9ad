// Files: a secret read, a write outside the grants, and the operations that
// could undo a carve-in or reach around it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "probes/catalog.hpp"

namespace px::probes {
namespace {

// mkdir -p of the parents of `path`, errors ignored: the probe's own
// operation answers what matters, and a write probe must not fail only
// because the folder it writes in was not there.
void make_parents(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1))
    ::mkdir(path.substr(0, slash).c_str(), 0755);
}

Answer file_read(const Args& a) {
  const int fd = ::open(a[0].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return by_errno(-1);
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  const int e = errno;
  ::close(fd);
  if (n < 0 && e == EISDIR) return {"OPEN", ""};  // a folder, opened: it can be listed
  errno = e;
  if (n < 0) return by_errno(-1);
  return {n == 0 ? "EMPTY" : "OPEN", ""};
}

// Appends a byte (truncates first with "trunc"), making the parents.
Answer file_write(const Args& a) {
  make_parents(a[0]);
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (a.size() > 1 && a[1] == "trunc" ? O_TRUNC : O_APPEND);
  const int fd = ::open(a[0].c_str(), flags, 0644);
  if (fd < 0) return by_errno(-1);
  const ssize_t n = ::write(fd, "x", 1);
  const int e = errno;
  ::close(fd);
  errno = e;
  return by_errno(n);
}

Answer file_rename(const Args& a) {
  return by_errno(::rename(a[0].c_str(), a[1].c_str()));
}
Answer file_unlink(const Args& a) {
  return by_errno(::unlink(a[0].c_str()));
}
Answer file_mkdir(const Args& a) {
  make_parents(a[0]);
  return by_errno(::mkdir(a[0].c_str(), 0755));
}
Answer file_rmdir(const Args& a) {
  return by_errno(::rmdir(a[0].c_str()));
}
Answer file_link(const Args& a) {
  return by_errno(::link(a[0].c_str(), a[1].c_str()));
}

// A link made inside the grants to a folder outside them, then read through.
Answer file_symlink_read(const Args& a) {
  if (::symlink(a[0].c_str(), a[1].c_str()) != 0) return by_errno(-1);
  return file_read({a[1] + "/" + a[2]});
}

constexpr Probe kFileProbes[] = {
    {"read", "PATH", 1, file_read},        {"write", "PATH [trunc]", 1, file_write},
    {"rename", "FROM TO", 2, file_rename}, {"unlink", "PATH", 1, file_unlink},
    {"mkdir", "PATH", 1, file_mkdir},      {"rmdir", "PATH", 1, file_rmdir},
    {"link", "TARGET NEW", 2, file_link},  {"symlink-read", "TARGET LINK FILE", 3, file_symlink_read},
};

}  // namespace

std::span<const Probe> file_probes() {
  return kFileProbes;
}

}  // namespace px::probes
