#include "backend/seal/cgroup_spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace px::seal {

namespace {

// struct clone_args of <linux/sched.h> up to `cgroup` (CLONE_ARGS_SIZE_VER2),
// spelled here because that header clashes with glibc's <sched.h>.
struct CloneArgs {
  std::uint64_t flags = 0;
  std::uint64_t pidfd = 0;
  std::uint64_t child_tid = 0;
  std::uint64_t parent_tid = 0;
  std::uint64_t exit_signal = 0;
  std::uint64_t stack = 0;
  std::uint64_t stack_size = 0;
  std::uint64_t tls = 0;
  std::uint64_t set_tid = 0;
  std::uint64_t set_tid_size = 0;
  std::uint64_t cgroup = 0;
};
constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ULL;

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

pid_t spawn_in_cgroup(int cgroup_fd, const std::function<void()>& child, pid_t& helper_pid) {
  helper_pid = 0;
#ifndef SYS_clone3
  (void)cgroup_fd;
  (void)child;
  return 0;
#else
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  const pid_t helper = ::fork();
  if (helper < 0) {
    const int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    errno = err;
    return -1;
  }
  if (helper == 0) {
    // Single-threaded now: the raw clone3 copies a consistent process.
    ::close(pipe_fds[0]);
    CloneArgs args;
    // CLONE_PARENT: the new process is the caller's child, not the helper's;
    // its exit signal is then the helper's (SIGCHLD), so exit_signal stays 0.
    args.flags = CLONE_PARENT | kCloneIntoCgroup;
    args.cgroup = static_cast<std::uint64_t>(cgroup_fd);
    const long r = ::syscall(SYS_clone3, &args, sizeof args);
    if (r == 0) {
      ::close(pipe_fds[1]);
      child();
      ::_exit(127);
    }
    const std::int64_t answer = r > 0 ? r : -static_cast<std::int64_t>(errno);
    (void)write_all(pipe_fds[1], &answer, sizeof answer);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::int64_t answer = 0;
  ssize_t got = 0;
  do {
    got = ::read(pipe_fds[0], &answer, sizeof answer);
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  helper_pid = helper;
  if (got != static_cast<ssize_t>(sizeof answer)) {
    errno = ECHILD;
    return -1;
  }
  if (answer > 0) return static_cast<pid_t>(answer);
  // Kernels without clone3 (ENOSYS) or without CLONE_INTO_CGROUP (E2BIG,
  // EINVAL): the caller's fallback. A real failure (EAGAIN, ENOMEM) is one.
  const int err = static_cast<int>(-answer);
  if (err == ENOSYS || err == E2BIG || err == EINVAL) return 0;
  errno = err;
  return -1;
#endif
}

}  // namespace px::seal
