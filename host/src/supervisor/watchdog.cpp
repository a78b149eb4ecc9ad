#include "supervisor/watchdog.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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

// Takes the descriptors waiting on the channel and keeps them open (they
// close when the watchdog ends). False when the supervisor closed its end.
bool take_handed(int channel) {
  char data;
  iovec io{&data, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC);
  return n > 0 || (n < 0 && errno == EINTR);
}

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

[[noreturn]] void watchdog_main(int supervisor_pidfd, int cgroup_fd, int channel, const char* cgroup_path,
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
    pollfd p[3] = {{supervisor_pidfd, POLLIN, 0}, {ended, POLLIN, 0}, {channel, POLLIN, 0}};
    const int rc = ::poll(p, 3, -1);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    if (p[0].revents) break;
    if (p[2].revents && !take_handed(channel)) {
      ::close(channel);
      channel = -1;  // poll ignores it from now on
    }
    if (p[1].revents) {
      pollfd gone{supervisor_pidfd, POLLIN, 0};
      (void)::poll(&gone, 1, 1000);
      ::_exit(0);
    }
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

Result<Watchdog> spawn_watchdog(const WatchdogSpec& spec) {
  UniqueFd self(sys_pidfd_open(::getpid(), 0));
  if (!self) return Error::io("pidfd_open of the supervisor", errno);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return Error::io("socketpair for the run's watchdog", errno);
  Watchdog dog;
  dog.channel = UniqueFd(pair[0]);
  UniqueFd theirs(pair[1]);
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
    // Keep the pidfd, the channel and the cgroup fd as 3, 4 and 5 (copied
    // above 10 first, so no move overwrites one not moved yet); close
    // everything else (the proxy's sockets must not outlive the supervisor in
    // here).
    int keep_self = ::fcntl(self.get(), F_DUPFD_CLOEXEC, 10);
    int keep_channel = ::fcntl(theirs.get(), F_DUPFD_CLOEXEC, 10);
    int keep_cg = spec.cgroup_fd >= 0 ? ::fcntl(spec.cgroup_fd, F_DUPFD_CLOEXEC, 10) : -1;
    ::dup3(keep_self, 3, O_CLOEXEC);
    keep_self = 3;
    ::dup3(keep_channel, 4, O_CLOEXEC);
    keep_channel = 4;
    if (keep_cg >= 0) {
      ::dup3(keep_cg, 5, O_CLOEXEC);
      keep_cg = 5;
    }
    ::syscall(SYS_close_range, keep_cg >= 0 ? 6 : 5, ~0U, 0);
    // stdin/out/err: not the terminal's, so nothing of ours holds it open.
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0)
      for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);
    if (devnull > 2) ::close(devnull);
    watchdog_main(keep_self, keep_cg, keep_channel, cg, raw.data(), raw.size());
  }
  dog.pid = pid;
  return dog;
}

bool hand_to_watchdog(const Watchdog& watchdog, int fd) {
  if (!watchdog.channel || fd < 0) return false;
  char data = 'h';
  iovec io{&data, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(watchdog.channel.get(), &msg, MSG_NOSIGNAL) == 1;
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
