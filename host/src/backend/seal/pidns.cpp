#include "backend/seal/pidns.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "backend/seal/sys.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::pidns {

namespace {
volatile sig_atomic_t g_command = 0;
void forward(int sig) {
  if (g_command > 0) ::kill(g_command, sig);
}
}  // namespace

Status die_with_parent(int parent_pipe) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return sys_error("prctl(PR_SET_PDEATHSIG, SIGKILL)");
  pollfd p{parent_pipe, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLIN)))
    return Error::internal("the supervisor died during start-up");
  return ok();
}

Status mount_proc(int view_root) {
  UniqueFd dir(::openat(view_root, "proc", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
  if (!dir && errno == ENOENT) {
    if (::mkdirat(view_root, "proc", 0555) != 0) return sys_error("mkdir <view>/proc");
    dir = UniqueFd(::openat(view_root, "proc", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
  }
  if (!dir) return sys_error("open <view>/proc");
  UniqueFd ctx(::fsopen("proc", FSOPEN_CLOEXEC));
  if (!ctx) return sys_error("fsopen(proc)");
  if (::fsconfig(ctx.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return sys_error("fsconfig(proc, CMD_CREATE) (a procfs needs a fully visible /proc on the host)");
  UniqueFd mnt(
      ::fsmount(ctx.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
  if (!mnt) return sys_error("fsmount(proc)");
  if (::move_mount(mnt.get(), "", dir.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    return sys_error("move_mount proc onto <view>/proc");
  return ok();
}

Status bind_outer_proc(int view_root) {
  UniqueFd dir(::openat(view_root, "proc", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return sys_error("open <view>/proc");
  // Recursive: the masks are mounts over parts of /proc, locked to it in
  // this user namespace, and must come along.
  UniqueFd tree(::open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
  if (!tree) return sys_error("open_tree(/proc)");
  if (::move_mount(tree.get(), "", dir.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    return sys_error("move_mount the container's /proc onto <view>/proc");
  return ok();
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 125;
}

int reap_until_status(pid_t command, int channel, const std::function<bool()>& serve) {
  g_command = command;
  struct sigaction sa {};
  sa.sa_handler = forward;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  if (channel < 0 || !serve) {
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      if (pid == command) return status;
      if (pid < 0 && errno != EINTR) return 125 << 8;  // as if it had exited 125
    }
  }
  // Serving the channel too: SIGCHLD through a signalfd, so that neither a
  // child's exit nor a request can be missed between two waits. A SIGCHLD from
  // before the mask is caught by the first WNOHANG sweep.
  sigset_t chld;
  ::sigemptyset(&chld);
  ::sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  UniqueFd children(::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
  bool serving = true;
  for (;;) {
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid == command) return status;
      if (pid <= 0) {
        if (pid < 0 && errno == ECHILD) return 125 << 8;  // as if it had exited 125
        break;
      }
    }
    pollfd fds[2] = {{children.get(), POLLIN, 0}, {serving ? channel : -1, POLLIN, 0}};
    if (::poll(fds, 2, children ? -1 : 100) < 0 && errno != EINTR) return 125 << 8;
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info[8];
      [[maybe_unused]] const ssize_t n = ::read(children.get(), info, sizeof info);
    }
    if (serving && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) serving = serve();
  }
}

}  // namespace px::seal::pidns
