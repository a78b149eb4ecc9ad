#include "supervisor/watchdog.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "common/unique_fd.hpp"
#include "supervisor/proc.hpp"

namespace px::supervisor {
namespace {

// Everything below runs in the forked child of a multi-threaded process:
// syscalls only, no allocation, no locks.

bool populated_zero(int cgroup_fd) {
  const int fd = ::openat(cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // gone: nothing left to wait for
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  return std::strstr(buf, "populated 0") != nullptr;
}

[[noreturn]] void watchdog_main(int supervisor_pidfd, int cgroup_fd, const char* cgroup_path,
                                const char* const* unlink_paths, std::size_t unlink_count) {
  ::setsid();
  ::prctl(PR_SET_NAME, "px-watchdog", 0, 0, 0);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (const int sig : {SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU})
    ::sigaction(sig, &ign, nullptr);
  for (;;) {
    pollfd p{supervisor_pidfd, POLLIN, 0};
    const int rc = ::poll(&p, 1, -1);
    if (rc > 0) break;
    if (rc < 0 && errno != EINTR) break;
  }
  if (cgroup_fd >= 0) {
    const int kfd = ::openat(cgroup_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
    if (kfd >= 0) {
      (void)!::write(kfd, "1", 1);
      ::close(kfd);
    }
    for (int i = 0; i < 2000 && !populated_zero(cgroup_fd); ++i) {
      const timespec ts{0, 5'000'000};
      ::nanosleep(&ts, nullptr);
    }
    ::close(cgroup_fd);
    if (cgroup_path) ::rmdir(cgroup_path);
  }
  for (std::size_t i = 0; i < unlink_count; ++i) ::unlink(unlink_paths[i]);
  ::_exit(0);
}

}  // namespace

Result<pid_t> spawn_watchdog(const WatchdogSpec& spec) {
  UniqueFd self(sys_pidfd_open(::getpid(), 0));
  if (!self) return Error::io("pidfd_open of the supervisor", errno);
  // Prepared before fork: the child may not allocate.
  std::vector<std::string> paths;
  for (const auto& p : spec.unlink) paths.push_back(p.string());
  std::vector<const char*> raw;
  for (const auto& p : paths) raw.push_back(p.c_str());
  const std::string cg_path = spec.cgroup_path.string();
  const char* cg = cg_path.empty() ? nullptr : cg_path.c_str();
  const pid_t pid = ::fork();
  if (pid < 0) return Error::io("fork the run's watchdog", errno);
  if (pid == 0) {
    // Keep the pidfd and the cgroup fd as 3 and 4; close everything else (the
    // proxy's sockets must not outlive the supervisor in here).
    int keep_self = ::fcntl(self.get(), F_DUPFD_CLOEXEC, 10);
    int keep_cg = spec.cgroup_fd >= 0 ? ::fcntl(spec.cgroup_fd, F_DUPFD_CLOEXEC, 10) : -1;
    ::dup3(keep_self, 3, O_CLOEXEC);
    keep_self = 3;
    if (keep_cg >= 0) {
      ::dup3(keep_cg, 4, O_CLOEXEC);
      keep_cg = 4;
    }
    const int first_free = keep_cg >= 0 ? 5 : 4;
    ::syscall(SYS_close_range, first_free, ~0U, 0);
    // stdin/out/err: not the terminal's, so nothing of ours holds it open.
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0)
      for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);
    if (devnull > 2) ::close(devnull);
    watchdog_main(keep_self, keep_cg, cg, raw.data(), raw.size());
  }
  return pid;
}

void stop_watchdog(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace px::supervisor
