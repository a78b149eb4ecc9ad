#include "common/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.hpp"

extern char** environ;

namespace px {
namespace {

// The parts posix_spawn wants, destroyed however the start ends.
class SpawnParts {
 public:
  SpawnParts() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attr_);
  }
  ~SpawnParts() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnParts(const SpawnParts&) = delete;
  SpawnParts& operator=(const SpawnParts&) = delete;
  posix_spawn_file_actions_t* actions() { return &actions_; }
  posix_spawnattr_t* attr() { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void kill_spawned(pid_t pid, bool group) {
  ::kill(group ? -pid : pid, SIGKILL);
}

}  // namespace

Result<pid_t> spawn_process(const SpawnSpec& spec, int stdout_fd, int stderr_fd) {
  if (spec.argv.empty() || spec.argv[0].empty())
    return Error::internal("a helper program was started without a name");
  SpawnParts parts;
  posix_spawn_file_actions_addopen(parts.actions(), 0, spec.stdin_file.c_str(), O_RDONLY, 0);
  if (stdout_fd >= 0)
    posix_spawn_file_actions_adddup2(parts.actions(), stdout_fd, 1);
  else
    posix_spawn_file_actions_addopen(parts.actions(), 1, "/dev/null", O_WRONLY, 0);
  if (stderr_fd >= 0)
    posix_spawn_file_actions_adddup2(parts.actions(), stderr_fd, 2);
  else
    posix_spawn_file_actions_addopen(parts.actions(), 2, "/dev/null", O_WRONLY, 0);
  short flags = POSIX_SPAWN_SETSIGDEF;
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(parts.attr(), &defaults);
  if (spec.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(parts.attr(), 0);
  }
  posix_spawnattr_setflags(parts.attr(), flags);
  const std::vector<char*> argv = pointers(spec.argv);
  std::vector<char*> env;
  if (spec.env) env = pointers(*spec.env);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], parts.actions(), parts.attr(), argv.data(),
                                spec.env ? env.data() : environ);
  if (rc != 0) return Error::io("start " + spec.argv[0], rc);
  return pid;
}

int wait_exit_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Result<Captured> spawn_capture(const SpawnSpec& spec, const CaptureLimits& limits) {
  const std::string name = spec.argv.empty() ? std::string("a helper program") : spec.argv[0];
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Error::io("create a pipe for " + name, errno);
  UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);
  UniqueFd err_r, err_w;
  if (!limits.merge_stderr) {
    int err_pipe[2];
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) return Error::io("create a pipe for " + name, errno);
    err_r.reset(err_pipe[0]);
    err_w.reset(err_pipe[1]);
  }
  PX_TRY_ASSIGN(const pid_t pid,
                spawn_process(spec, out_w.get(), limits.merge_stderr ? out_w.get() : err_w.get()));
  out_w.reset();
  err_w.reset();

  Captured got;
  const std::size_t reserve = std::min<std::size_t>(limits.max_bytes, 1 << 20);
  got.out.reserve(reserve);
  if (!limits.merge_stderr) got.err.reserve(reserve);
  const bool has_deadline = limits.timeout.count() > 0;
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  pollfd fds[2] = {{out_r.get(), POLLIN, 0}, {err_r ? err_r.get() : -1, POLLIN, 0}};
  int open_fds = err_r ? 2 : 1;
  while (open_fds > 0 && !got.too_big) {
    int wait_ms = -1;
    if (has_deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        got.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    const int n = ::poll(fds, 2, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2 && !got.too_big; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string& into = i == 0 ? got.out : got.err;
      const std::size_t room = limits.max_bytes - into.size();
      into.append(buf, std::min(room, static_cast<std::size_t>(r)));
      got.too_big = static_cast<std::size_t>(r) > room;
    }
  }
  if (got.timed_out || got.too_big) kill_spawned(pid, spec.own_process_group);
  got.exit_status = wait_exit_status(pid);
  got.pid = pid;
  if (limits.end_group_after && spec.own_process_group) ::kill(-pid, SIGKILL);
  return got;
}

}  // namespace px
