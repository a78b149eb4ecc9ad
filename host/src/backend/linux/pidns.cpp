#include "backend/linux/pidns.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "backend/linux/sys.hpp"
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

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 125;
}

int reap_until_status(pid_t command) {
  g_command = command;
  struct sigaction sa {};
  sa.sa_handler = forward;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid == command) return status;
    if (pid < 0 && errno != EINTR) return 125 << 8;  // as if it had exited 125
  }
}

}  // namespace px::seal::pidns
