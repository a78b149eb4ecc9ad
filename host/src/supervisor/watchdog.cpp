#include "supervisor/watchdog.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <thread>

#include "common/unique_fd.hpp"
#include "supervisor/proc.hpp"

namespace px::supervisor {
namespace {

// Everything below runs in the forked child of a multi-threaded process:
// syscalls only, no allocation, no locks.

constexpr std::size_t kMaxHeld = 4;  // fds 5..8: below the copies' floor of 10

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
  // SIGTERM (blocked since before the fork, so none is lost) is the
  // supervisor's word that the run ended normally: it removed the cgroup and
  // the entries itself. What the watchdog holds is closed when it ends, a
  // moment after the supervisor (or a second at the most, for a supervisor
  // that goes on with other runs).
  sigset_t term;
  ::sigemptyset(&term);
  ::sigaddset(&term, SIGTERM);
  const int ended = ::signalfd(-1, &term, SFD_CLOEXEC);
  for (;;) {
    pollfd p[2] = {{supervisor_pidfd, POLLIN, 0}, {ended, POLLIN, 0}};
    const int rc = ::poll(p, ended >= 0 ? 2 : 1, -1);
    if (rc > 0 && p[0].revents) break;
    if (rc > 0 && p[1].revents) {
      pollfd gone{supervisor_pidfd, POLLIN, 0};
      (void)::poll(&gone, 1, 1000);
      ::_exit(0);
    }
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
  sigset_t term, before;
  ::sigemptyset(&term);
  ::sigaddset(&term, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &term, &before);
  const pid_t pid = ::fork();
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) return Error::io("fork the run's watchdog", errno);
  if (pid == 0) {
    // Keep the pidfd and the cgroup fd as 3 and 4 and the held ones from 5 on
    // (below 10, where every copy made first lies, so no move overwrites a
    // descriptor not moved yet); close everything else (the proxy's sockets
    // must not outlive the supervisor in here).
    int keep_self = ::fcntl(self.get(), F_DUPFD_CLOEXEC, 10);
    int keep_cg = spec.cgroup_fd >= 0 ? ::fcntl(spec.cgroup_fd, F_DUPFD_CLOEXEC, 10) : -1;
    int held[kMaxHeld];
    const std::size_t n_held = spec.hold.size() < kMaxHeld ? spec.hold.size() : kMaxHeld;
    for (std::size_t i = 0; i < n_held; ++i) held[i] = ::fcntl(spec.hold[i], F_DUPFD_CLOEXEC, 10);
    ::dup3(keep_self, 3, O_CLOEXEC);
    keep_self = 3;
    if (keep_cg >= 0) {
      ::dup3(keep_cg, 4, O_CLOEXEC);
      keep_cg = 4;
    }
    int first_free = keep_cg >= 0 ? 5 : 4;
    for (std::size_t i = 0; i < n_held; ++i)
      if (held[i] >= 0) ::dup3(held[i], first_free++, O_CLOEXEC);
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
  ::kill(pid, SIGTERM);
  if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
  std::thread([pid] {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }).detach();
}

}  // namespace px::supervisor
