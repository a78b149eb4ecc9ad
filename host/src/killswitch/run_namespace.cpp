#include "killswitch/run_namespace.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace px::killswitch {

namespace {

// Digits of `n` appended at `out` (no allocation); returns the end.
char* put_number(char* out, long n) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0 && count < 24);
  while (count > 0) *out++ = digits[--count];
  return out;
}

// The pid `pidfd` refers to (its fdinfo's "Pid:" line), or -1.
long pid_of(int pidfd) {
  char path[48] = "/proc/self/fdinfo/";
  *put_number(path + 18, pidfd) = '\0';
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* at = std::strstr(buf, "\nPid:");
  if (!at) return -1;
  at += 5;
  while (*at == ' ' || *at == '\t') ++at;
  long pid = 0;
  if (*at < '0' || *at > '9') return -1;
  while (*at >= '0' && *at <= '9') pid = pid * 10 + (*at++ - '0');
  return pid;
}

// Whether /proc/PID is a zombie (or gone).
bool zombie(int proc, const char* pid) {
  char path[40];
  const std::size_t len = ::strnlen(pid, 20);
  std::memcpy(path, pid, len);
  std::memcpy(path + len, "/stat", 6);
  const int fd = ::openat(proc, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // gone
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

}  // namespace

RunNamespace namespace_made_by(int pidfd) {
  const long pid = pid_of(pidfd);
  if (pid <= 0) return {};
  char path[64] = "/proc/";
  char* end = put_number(path + 6, pid);
  std::memcpy(end, "/ns/pid_for_children", 21);
  struct stat theirs {};
  struct stat ours {};
  if (::stat(path, &theirs) != 0 || ::stat("/proc/self/ns/pid", &ours) != 0) return {};
  if (theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev) return {};  // not made yet
  // Still the same process: the pid was not reused between the two looks.
  if (::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0) return {};
  return {theirs.st_dev, theirs.st_ino};
}

bool nothing_runs_in(const RunNamespace& ns) {
  if (!ns.known()) return false;
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return false;
  bool empty = true;
  alignas(8) char buf[8192];
  for (long n; empty && (n = ::syscall(SYS_getdents64, proc, buf, sizeof buf)) > 0;) {
    for (long at = 0; empty && at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + at);
      at += e->d_reclen;
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      char path[64];
      const std::size_t len = ::strnlen(e->d_name, 20);
      std::memcpy(path, e->d_name, len);
      std::memcpy(path + len, "/ns/pid", 8);
      struct stat st {};
      if (::fstatat(proc, path, &st, 0) == 0 && st.st_ino == ns.ino && st.st_dev == ns.dev &&
          !zombie(proc, e->d_name))
        empty = false;
    }
  }
  ::close(proc);
  return empty;
}

}  // namespace px::killswitch
