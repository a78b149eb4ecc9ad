#include "tree_helpers.hpp"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "killswitch/cgroup.hpp"
#include "killswitch/proc.hpp"

namespace px::killswitch::testing {

namespace {

// The tree: a setsid daemon appending to `alive`, a setsid sleeper, a
// double-forked sleeper (its parent exits at once), a busy loop, and sleepers
// up to N, then "ready".
const char* kScript = R"SH(
n=$1; d=$2
setsid sh -c 'while :; do echo x >> "$0/alive"; sleep 0.02; done' "$d" </dev/null >/dev/null 2>&1 &
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
(sh -c 'sleep 1000 & exit 0' &)
sh -c 'while :; do :; done' &
i=5
while [ $i -lt $n ]; do sleep 1000 & i=$((i+1)); done
echo ok > "$d/ready"
wait
)SH";

// PF_EXITING in /proc/PID/stat's flags: the process is on its way out and
// has left its cgroup already, though not yet a zombie.
bool exiting(pid_t pid) {
  const auto text = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return true;
  const std::string& stat = *text;
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return true;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  unsigned long flags = 0;
  for (int i = 3; i <= 9 && fields >> field; ++i)
    if (i == 9) flags = std::stoul(field);
  return (flags & 0x4) != 0;
}

}  // namespace

bool ended_or_ending(pid_t pid) {
  const auto st = read_proc_stat(pid);
  return !st || st->state == 'Z' || st->state == 'X' || exiting(pid);
}

bool stopped_or_stop_pending(pid_t pid) {
  const auto st = read_proc_stat(pid);
  if (!st) return false;
  if (is_stopped_state(st->state)) return true;
  // SigPnd: pending for the thread; ShdPnd: for the process (kill(2) sends there).
  std::istringstream status(read_proc_file("/proc/" + std::to_string(pid) + "/status").value_or(""));
  const std::uint64_t stop_bit = std::uint64_t{1} << (SIGSTOP - 1);
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
      if (std::stoull(line.substr(7), nullptr, 16) & stop_bit) return true;
  return false;
}

std::vector<pid_t> marked_processes(const std::string& mark) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    if (!proc_environ_has(pid, "PX_TREE_MARK=" + mark)) continue;
    const auto st = read_proc_stat(pid);
    if (st && st->state != 'Z' && st->state != 'X' && !exiting(pid)) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

std::uintmax_t alive_size(const Tree& t) {
  std::error_code ec;
  const auto s = fs::file_size(t.dir / "alive", ec);
  return ec ? 0 : s;
}

void reap(pid_t pid) {
  if (pid > 0) ::waitpid(pid, nullptr, WNOHANG);
}

bool wait_ready(const Tree& t, int n) {
  return wait_until([&] { return fs::exists(t.dir / "ready"); }, 20000) &&
         wait_until([&] { return static_cast<int>(marked_processes(t.mark).size()) >= n; }, 5000);
}

Tree spawn_tree(int n, int cgroup_fd, bool new_pidns, bool wait_ready) {
  Tree t;
  std::random_device rd;
  t.mark = std::to_string(rd()) + std::to_string(rd());
  t.dir = fs::temp_directory_path() / ("px-tree-" + t.mark);
  fs::create_directories(t.dir);
  const std::string n_text = std::to_string(n), dir_text = t.dir.string(),
                    env_mark = "PX_TREE_MARK=" + t.mark;
  const pid_t parent = ::getpid();
  pid_t pid = 0;
  if (new_pidns) {
    pid =
        static_cast<pid_t>(::syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  } else {
    pid = ::fork();
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent && !new_pidns) ::_exit(1);
    if (cgroup_fd >= 0 && enter_cgroup(cgroup_fd) != 0) ::_exit(2);
    char* const argv[] = {const_cast<char*>("sh"),
                          const_cast<char*>("-c"),
                          const_cast<char*>(kScript),
                          const_cast<char*>("tree"),
                          const_cast<char*>(n_text.c_str()),
                          const_cast<char*>(dir_text.c_str()),
                          nullptr};
    char* const envp[] = {const_cast<char*>(env_mark.c_str()), const_cast<char*>("PATH=/usr/bin:/bin"),
                          nullptr};
    ::execve("/bin/sh", argv, envp);
    ::_exit(127);
  }
  t.root = pid;
  if (wait_ready) testing::wait_ready(t, n);
  return t;
}

}  // namespace px::killswitch::testing
