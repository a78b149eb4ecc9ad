#include "killswitch/watchdog.hpp"

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
#include <mutex>
#include <vector>

#include "common/unique_fd.hpp"
#include "killswitch/proc.hpp"
#include "killswitch/run_namespace.hpp"
#include "protect/sweep_after_death.hpp"

namespace px::killswitch {
namespace {

// Everything below runs in the forked child of a multi-threaded process:
// syscalls only, no allocation, no locks.

// What was handed for the sweep after the supervisor's death (-1: nothing).
struct Handed {
  int sweep_state = -1;
  int sweep_dir = -1;
  int first_process = -1;
  int private_dirs = -1;  // runs-private: its dirs no live run holds are removed after the run
  // The run's pid namespace (its first process unshares it as it starts),
  // taken while that process lives.
  RunNamespace ns;
  int ns_tries = 0;
};

void take_namespace(Handed& handed) {
  if (handed.first_process < 0 || handed.ns.known()) return;
  ++handed.ns_tries;
  handed.ns = namespace_made_by(handed.first_process);
}

void replace(int& slot, int fd) {
  if (slot >= 0) ::close(slot);
  slot = fd;
}

// Takes the descriptors waiting on the channel. The message's byte says what
// they are: 'h' held until the watchdog ends, 's' the sweep's state and run
// folder, 'p' the run's first process. False when the supervisor closed its end.
bool take_handed(int channel, Handed& handed) {
  char tag = 0;
  iovec io{&tag, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0) return n < 0 && errno == EINTR;
  int fds[4] = {-1, -1, -1, -1};
  std::size_t count = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t in = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < in; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (count < 4)
        fds[count++] = fd;
      else
        ::close(fd);
    }
  }
  if (tag == 's' && count == 2) {
    replace(handed.sweep_state, fds[0]);
    replace(handed.sweep_dir, fds[1]);
  } else if (tag == 'r' && count == 1) {
    replace(handed.private_dirs, fds[0]);
  } else if (tag == 'p' && count == 1) {
    replace(handed.first_process, fds[0]);
    handed.ns = {};
    handed.ns_tries = 0;
    take_namespace(handed);
  }
  // 'h', and anything else: kept open until the watchdog ends.
  return true;
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

// The supervisor's executable, exec'd for the sweep: fd 3 the state and fd
// 4 the run folder (when handed), fd 5 the runs-private folder (when
// handed), nothing else open but 0-2 (/dev/null), an empty environment
// (nothing of the supervisor's reaches it but what it was handed). What is
// not handed is closed by the exec (the watchdog's own 3-5 are close-on-exec).
[[noreturn]] void exec_sweep(int exe_fd, const Handed& handed) {
  // Each first copied above 5, so that placing one at 3, 4 or 5 never
  // closes another handed there (fds arrive at the lowest numbers free).
  const auto high = [](int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 6); };
  const bool sweep = handed.sweep_state >= 0 && handed.sweep_dir >= 0;
  const int state = sweep ? high(handed.sweep_state) : -1, dir = sweep ? high(handed.sweep_dir) : -1;
  const int private_dirs = high(handed.private_dirs);
  const bool moved = (!sweep || (state >= 0 && dir >= 0 && ::dup2(state, 3) == 3 && ::dup2(dir, 4) == 4)) &&
                     (handed.private_dirs < 0 || (private_dirs >= 0 && ::dup2(private_dirs, 5) == 5));
  if (moved) {
    static const char* const argv[] = {"parallex", protect::kSweepArgument, nullptr};
    static const char* const envp[] = {nullptr};
    ::syscall(SYS_execveat, exe_fd, "", argv, envp, AT_EMPTY_PATH);
  }
  ::_exit(0);
}

[[noreturn]] void watchdog_main(int supervisor_pidfd, int cgroup_fd, int channel, int exe_fd,
                                const char* cgroup_path, const char* const* unlink_paths,
                                std::size_t unlink_count, const char* const* rmdir_paths,
                                std::size_t rmdir_count) {
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
  Handed handed;
  for (;;) {
    pollfd p[3] = {{supervisor_pidfd, POLLIN, 0}, {ended, POLLIN, 0}, {channel, POLLIN, 0}};
    // Until the run's pid namespace is known (a few ms after its first
    // process starts; two seconds at the most), look again every 5 ms.
    const bool looking = handed.first_process >= 0 && !handed.ns.known() && handed.ns_tries < 400;
    const int rc = ::poll(p, 3, looking ? 5 : -1);
    if (looking) take_namespace(handed);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    if (p[0].revents) break;
    if (p[2].revents && !take_handed(channel, handed)) {
      ::close(channel);
      channel = -1;  // poll ignores it from now on
    }
    if (p[1].revents) {
      pollfd gone{supervisor_pidfd, POLLIN, 0};
      (void)::poll(&gone, 1, 1000);
      ::_exit(0);
    }
  }
  // Whether every process of the run is known to be dead: only then may the
  // sweep move what they wrote (nothing of the run can race it).
  bool run_dead = false;
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
    run_dead = populated_zero(cgroup_fd);
    ::close(cgroup_fd);
    if (cgroup_path) ::rmdir(cgroup_path);
  } else if (handed.first_process >= 0 && handed.ns.known()) {
    // The run's first process has PR_SET_PDEATHSIG(SIGKILL), and so has the
    // init of its pid namespace under it; when that init ends, the kernel
    // ends every process in the namespace. Dead when the first process is
    // and no process is left in the namespace (ten seconds at the most).
    pollfd first{handed.first_process, POLLIN, 0};
    if (::poll(&first, 1, 10'000) == 1)
      for (int i = 0; i < 2000 && !run_dead; ++i) {
        run_dead = nothing_runs_in(handed.ns);
        const timespec ts{0, 5'000'000};
        if (!run_dead) ::nanosleep(&ts, nullptr);
      }
  }
  for (std::size_t i = 0; i < unlink_count; ++i) ::unlink(unlink_paths[i]);
  // EBUSY until the kernel has released the run's last task (a second at the most).
  for (std::size_t i = 0; i < rmdir_count; ++i)
    for (int tries = 0; tries < 200 && ::rmdir(rmdir_paths[i]) != 0 && errno == EBUSY; ++tries) {
      const timespec ts{0, 5'000'000};
      ::nanosleep(&ts, nullptr);
    }
  if (run_dead && exe_fd >= 0 &&
      ((handed.sweep_state >= 0 && handed.sweep_dir >= 0) || handed.private_dirs >= 0))
    exec_sweep(exe_fd, handed);
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
  std::vector<std::string> dirs;
  for (const auto& d : spec.rmdir) dirs.push_back(d.string());
  std::vector<const char*> raw_dirs;
  for (const auto& d : dirs) raw_dirs.push_back(d.c_str());
  const std::string cg_path = spec.cgroup_path.string();
  // The executable the sweep runs in (protect/sweep_after_death.hpp): this
  // one, as it is now, even if its path is replaced during the run.
  UniqueFd exe(::open("/proc/self/exe", O_PATH | O_CLOEXEC));
  const char* cg = cg_path.empty() ? nullptr : cg_path.c_str();
  sigset_t term, before;
  ::sigemptyset(&term);
  ::sigaddset(&term, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &term, &before);
  const pid_t pid = ::fork();
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) return Error::io("fork the run's watchdog", errno);
  if (pid == 0) {
    // Keep the pidfd, the channel, the cgroup fd and the executable as 3, 4,
    // 5 and 6 (copied above 10 first, so no move overwrites one not moved
    // yet); close everything else (the proxy's sockets must not outlive the
    // supervisor in here).
    const int keep_self = ::fcntl(self.get(), F_DUPFD_CLOEXEC, 10);
    const int keep_channel = ::fcntl(theirs.get(), F_DUPFD_CLOEXEC, 10);
    const int keep_cg = spec.cgroup_fd >= 0 ? ::fcntl(spec.cgroup_fd, F_DUPFD_CLOEXEC, 10) : -1;
    const int keep_exe = exe ? ::fcntl(exe.get(), F_DUPFD_CLOEXEC, 10) : -1;
    ::dup3(keep_self, 3, O_CLOEXEC);
    ::dup3(keep_channel, 4, O_CLOEXEC);
    if (keep_cg >= 0)
      ::dup3(keep_cg, 5, O_CLOEXEC);
    else
      ::close(5);
    if (keep_exe >= 0)
      ::dup3(keep_exe, 6, O_CLOEXEC);
    else
      ::close(6);
    ::syscall(SYS_close_range, 7, ~0U, 0);
    // stdin/out/err: not the terminal's, so nothing of ours holds it open.
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0)
      for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);
    if (devnull > 2) ::close(devnull);
    watchdog_main(3, keep_cg >= 0 ? 5 : -1, 4, keep_exe >= 0 ? 6 : -1, cg, raw.data(), raw.size(),
                  raw_dirs.data(), raw_dirs.size());
  }
  dog.pid = pid;
  return dog;
}

namespace {

bool send_to_watchdog(const Watchdog& watchdog, char tag, const int* fds, std::size_t count) {
  if (!watchdog.channel || count == 0 || count > 2) return false;
  for (std::size_t i = 0; i < count; ++i)
    if (fds[i] < 0) return false;
  iovec io{&tag, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 2)] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * count);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * count);
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * count);
  return ::sendmsg(watchdog.channel.get(), &msg, MSG_NOSIGNAL) == 1;
}

}  // namespace

bool hand_to_watchdog(const Watchdog& watchdog, int fd) {
  return send_to_watchdog(watchdog, 'h', &fd, 1);
}

bool hand_sweep_to_watchdog(const Watchdog& watchdog, int state_fd, int run_dir_fd) {
  const int fds[2] = {state_fd, run_dir_fd};
  return send_to_watchdog(watchdog, 's', fds, 2);
}

bool hand_private_dirs_to_watchdog(const Watchdog& watchdog, int dir_fd) {
  return send_to_watchdog(watchdog, 'r', &dir_fd, 1);
}

bool hand_first_process_to_watchdog(const Watchdog& watchdog, int pidfd) {
  return send_to_watchdog(watchdog, 'p', &pidfd, 1);
}

namespace {

// Watchdogs told to stop and not reaped yet. No thread is left behind
// to reap one: a thread of ours alive while the seal (or anything else) is
// forked may hold a lock, the allocator's among them, that the child then
// waits for forever. A stopped watchdog ends within a second; its zombie
// holds no descriptor, and is reaped by the next stop_watchdog in this
// process (a supervisor that goes on with other runs), or by init once this
// process ends. Only this file waits for a watchdog, so its pid is not reused
// while it is listed here.
std::mutex stopped_mutex;
std::vector<pid_t> stopped;

}  // namespace

void stop_watchdog(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  const std::lock_guard<std::mutex> lock(stopped_mutex);
  stopped.push_back(pid);
  std::erase_if(stopped, [](pid_t p) {
    const pid_t r = ::waitpid(p, nullptr, WNOHANG);
    return r == p || (r < 0 && errno == ECHILD);
  });
}

}  // namespace px::killswitch
