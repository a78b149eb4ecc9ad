#include "backend/seal/process_limit.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/seal/sys.hpp"

namespace px::backend {

// Here, not in backend.cpp: the Linux backend (a library px_backend links)
// and the supervisor both ask it.
bool process_limit_hidden_for_tests(std::string_view id) {
  const char* hidden = std::getenv("PARALLEX_TEST_PROCESS_LIMIT_WITHOUT");
  if (!hidden || !*hidden) return false;
  std::stringstream list(hidden);
  std::string item;
  while (std::getline(list, item, ','))
    if (item == id) return true;
  return false;
}

}  // namespace px::backend

namespace px::seal::process_limit {

namespace {

namespace fs = std::filesystem;

// RESERVED_PIDS: once this many pids were given out in a namespace, the
// kernel gives out no pid below it again (kernel/pid.c).
constexpr std::uint64_t kReservedPids = 300;

bool kernel_at_least(int major, int minor) {
  utsname u{};
  if (::uname(&u) != 0) return false;
  int ma = 0, mi = 0;
  if (std::sscanf(u.release, "%d.%d", &ma, &mi) != 2) return false;
  return ma > major || (ma == major && mi >= minor);
}

// Whether this process's uid is the host's root: the kernel never applies
// RLIMIT_NPROC to it. Read from our user namespace's map, one level up (a
// deeper nesting reads as not root: the probe then says so for real).
bool host_root() {
  const uid_t uid = ::getuid();
  std::ifstream in("/proc/self/uid_map");
  unsigned long inside = 0, outside = 0, count = 0;
  while (in >> inside >> outside >> count)
    if (uid >= inside && uid - inside < count) return outside + (uid - inside) == 0;
  return uid == 0;
}

bool write_map(const char* path, unsigned id) {
  const std::string line = std::to_string(id) + " " + std::to_string(id) + " 1";
  return write_file(path, line).has_value();
}

// In a probe's child: as many children as fork allows, at most `most`, each
// waiting on a pipe that closes when the probe's child exits (so none of them
// outlives it); -1 when the pipe cannot be made.
int children_fork_allows(int most) {
  int hold[2];
  if (::pipe(hold) != 0) return -1;
  int made = 0;
  for (; made < most; ++made) {
    const pid_t c = ::fork();
    if (c < 0) break;
    if (c == 0) {
      char b;
      ::close(hold[1]);
      (void)!::read(hold[0], &b, 1);
      ::_exit(0);
    }
  }
  return made;
}

// In a child: the run's user namespace as the seal makes it, RLIMIT_NPROC of
// 4, then as many children as fork allows (at most 16). 0: fork stopped below
// the limit.
int probe_rlimit() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER) != 0) ::_exit(2);
    (void)write_file("/proc/self/setgroups", "deny");
    (void)write_map("/proc/self/uid_map", uid);
    (void)write_map("/proc/self/gid_map", gid);
    if (!limit_nproc(4)) ::_exit(3);
    const int made = children_fork_allows(16);
    ::_exit(made >= 0 && made < 4 ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 9;
  return WEXITSTATUS(status);
}

// Whether a child can make a user namespace (the seal's first step).
bool user_namespace_possible() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Tasks (processes and threads: RLIMIT_NPROC counts both) whose real uid is
// ours, as /proc shows them.
std::uint64_t tasks_of_this_user() {
  const uid_t uid = ::getuid();
  std::uint64_t tasks = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(it->path() / "status");
    std::string line;
    bool ours = false;
    std::uint64_t threads = 1;
    while (std::getline(in, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream fields(line.substr(4));
        unsigned long real = 0;
        ours = (fields >> real) && real == uid;
      } else if (line.rfind("Threads:", 0) == 0) {
        std::istringstream(line.substr(8)) >> threads;
      }
    }
    if (ours) tasks += threads;
  }
  return tasks;
}

// In a child, without a namespace of its own: the user's RLIMIT_NPROC at its
// tasks now plus 4, then as many children as fork allows (at most 64). 0: fork
// stopped.
int probe_user_rlimit() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!limit_nproc_of_user(4)) ::_exit(3);
    const int made = children_fork_allows(64);
    ::_exit(made >= 0 && made < 64 ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 9;
  return WEXITSTATUS(status);
}

// In a child: a pid namespace (in a user namespace unless root) and its own
// /proc, whose pid_max is set; 0 when the namespace took it and the host's
// pid_max did not change. Only on kernels that have a pid_max per namespace:
// before Linux 6.14 the host's root writing it would change the host's.
int probe_pid_max() {
  const std::string host_before = [] {
    std::ifstream in("/proc/sys/kernel/pid_max");
    std::string v;
    in >> v;
    return v;
  }();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER) == 0) {
      (void)write_file("/proc/self/setgroups", "deny");
      // A namespace without its uid map is one the seal gives up (root
      // without CAP_SETFCAP, as a container runs it): no pid namespace then.
      if (!write_map("/proc/self/uid_map", uid) || !write_map("/proc/self/gid_map", gid)) ::_exit(2);
    } else if (uid != 0) {
      ::_exit(2);
    }
    if (::unshare(CLONE_NEWPID) != 0) ::_exit(3);
    const pid_t init = ::fork();
    if (init == 0) {
      if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        ::_exit(4);
      if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) ::_exit(5);
      if (!write_file("/proc/sys/kernel/pid_max", std::to_string(pid_max_for(1000)))) ::_exit(6);
      std::ifstream in("/proc/sys/kernel/pid_max");
      std::uint64_t now = 0;
      in >> now;
      ::_exit(now == pid_max_for(1000) ? 0 : 7);
    }
    int status = 0;
    if (init < 0 || ::waitpid(init, &status, 0) != init || !WIFEXITED(status)) ::_exit(8);
    ::_exit(WEXITSTATUS(status));
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 9;
  std::ifstream in("/proc/sys/kernel/pid_max");
  std::string host_after;
  in >> host_after;
  if (host_after != host_before) return 10;  // never expected: the version gate keeps old kernels out
  return WEXITSTATUS(status);
}

}  // namespace

std::uint64_t pid_max_for(std::uint64_t max) {
  return max + kReservedPids;
}

bool rlimit_holds(bool thorough) {
  if (backend::process_limit_hidden_for_tests(kRlimit) || !kernel_at_least(5, 14) || host_root())
    return false;
  return !thorough || probe_rlimit() == 0;
}

bool pid_max_holds(bool thorough) {
  if (backend::process_limit_hidden_for_tests(kPidMax) || !kernel_at_least(6, 14)) return false;
  return !thorough || probe_pid_max() == 0;
}

bool user_rlimit_holds(bool thorough) {
  if (backend::process_limit_hidden_for_tests(kRlimitUser) || host_root()) return false;
  return !thorough || probe_user_rlimit() == 0;
}

backend::ProcessLimitMechanism mechanism(const std::string& id) {
  if (id == kRlimit)
    return {id, "RLIMIT_NPROC in the run's own user namespace (counted per namespace since Linux 5.14)"};
  if (id == kPidMax)
    return {id, "pid_max of the run's own pid namespace (Linux 6.14+; it may let up to 299 more through)"};
  if (id == kRlimitUser)
    return {
        id,
        "RLIMIT_NPROC of your user, set to your tasks at the run's start plus the limit (no user namespace "
        "of the run's own: your other processes here count too)"};
  return {id, id};
}

std::vector<backend::ProcessLimitMechanism> available(bool thorough) {
  std::vector<backend::ProcessLimitMechanism> out;
  if (rlimit_holds(thorough))
    out.push_back(mechanism(kRlimit));
  else if (thorough && !user_namespace_possible() && user_rlimit_holds(true))
    out.push_back(mechanism(kRlimitUser));  // what the seal without namespaces sets (launch.cpp)
  if (pid_max_holds(thorough)) out.push_back(mechanism(kPidMax));
  return out;
}

Status limit_nproc(std::uint64_t max) {
  rlimit now{};
  if (::getrlimit(RLIMIT_NPROC, &now) != 0) return sys_error("getrlimit(RLIMIT_NPROC)");
  const rlim_t value = now.rlim_max != RLIM_INFINITY && now.rlim_max < max ? now.rlim_max : max;
  const rlimit set{value, value};
  if (::setrlimit(RLIMIT_NPROC, &set) != 0)
    return sys_error("setrlimit(RLIMIT_NPROC, " + std::to_string(value) + ")");
  return ok();
}

Status limit_nproc_of_user(std::uint64_t max) {
  return limit_nproc(tasks_of_this_user() + max);
}

Status limit_pid_numbers(int view_root, std::uint64_t max) {
  {
    UniqueFd f(::openat(view_root, "proc/sys/kernel/pid_max", O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    const std::string value = std::to_string(pid_max_for(max));
    if (!f) return sys_error("open <view>/proc/sys/kernel/pid_max");
    if (::write(f.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
      return sys_error("write " + value + " to the run's pid_max");
  }
  // The run's root (of its user namespace) could raise it again: /proc/sys
  // read-only for the whole run, as container runtimes keep it.
  UniqueFd sys(::open_tree(view_root, "proc/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (!sys) return sys_error("open_tree <view>/proc/sys");
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  if (::mount_setattr(sys.get(), "", AT_EMPTY_PATH, &ro, sizeof ro) != 0)
    return sys_error("mount_setattr <view>/proc/sys read-only");
  UniqueFd target(::openat(view_root, "proc/sys", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!target) return sys_error("open <view>/proc/sys");
  if (::move_mount(sys.get(), "", target.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
    return sys_error("move_mount <view>/proc/sys read-only");
  return ok();
}

}  // namespace px::seal::process_limit
