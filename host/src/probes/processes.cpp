// Other processes (the seal's init, the supervisor, the host's) and this
// one: signals, ptrace, memory, inherited descriptors, privileges, and the
// process limit.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "probes/catalog.hpp"

namespace px::probes {
namespace {

// A real signal, not 0 (which only asks whether the process exists): SIGCONT
// does nothing to a process that is running, should it ever arrive.
Answer proc_signal(const Args& a) {
  return by_errno(::kill(std::atoi(a[0].c_str()), SIGCONT));
}

Answer proc_ptrace(const Args& a) {
  return by_errno(::ptrace(PTRACE_ATTACH, std::atoi(a[0].c_str()), nullptr, nullptr));
}

Answer proc_mem(const Args& a) {
  const int fd = ::open(("/proc/" + a[0] + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return by_errno(fd);
}

// Descriptors besides 0-2 this process was started with: NONE, or OPEN with
// their count and numbers.
Answer proc_fds(const Args&) {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return by_errno(-1);
  const int self = ::dirfd(d);
  int extra = 0;
  std::string list;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd <= 2 || fd == self) continue;
    ++extra;
    list += std::string(e->d_name) + ",";
  }
  ::closedir(d);
  return {extra ? "OPEN" : "NONE", std::to_string(extra) + " " + list};
}

// no_new_privs: NNP1 when set (no setuid program can raise privileges).
Answer proc_nnp(const Args&) {
  FILE* f = std::fopen("/proc/self/status", "re");
  if (!f) return by_errno(-1);
  char line[256];
  Answer out{"E?", ""};
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "NoNewPrivs:", 11) == 0) {
      out.token = std::strstr(line, "1") ? "NNP1" : "NNP0";
      break;
    }
  std::fclose(f);
  return out;
}

// A fork bomb that stops itself: children that wait (each holds a process
// slot) until fork fails or CAP exist, then all are let go. The errno of the
// failed fork (EAGAIN: the process limit held), or OPEN when CAP was reached,
// which the caller sets well above the limit so that a missing limit cannot
// take the machine down; the detail is how many children were made.
Answer proc_fork_bomb(const Args& a) {
  const long cap = std::strtol(a[0].c_str(), nullptr, 10);
  int hold[2];
  if (::pipe2(hold, O_CLOEXEC) != 0) return by_errno(-1);
  long made = 0;
  int failed = 0;
  for (; made < cap; ++made) {
    const pid_t child = ::fork();
    if (child < 0) {
      failed = errno;
      break;
    }
    if (child == 0) {
      char b;
      ::close(hold[1]);
      // EOF when the bomb closes its end (or dies): then go.
      while (::read(hold[0], &b, 1) < 0 && errno == EINTR) {
      }
      ::_exit(0);
    }
  }
  ::close(hold[1]);
  ::close(hold[0]);
  while (::wait(nullptr) > 0 || errno == EINTR) {
  }
  return {made >= cap ? "OPEN" : errno_token(failed), std::to_string(made)};
}

constexpr Probe kProcessProbes[] = {
    {"signal", "PID", 1, proc_signal}, {"ptrace", "PID", 1, proc_ptrace},
    {"mem", "PID", 1, proc_mem},       {"fds", "", 0, proc_fds},
    {"nnp", "", 0, proc_nnp},          {"fork-bomb", "CAP", 1, proc_fork_bomb},
};

}  // namespace

std::span<const Probe> process_probes() {
  return kProcessProbes;
}

}  // namespace px::probes
