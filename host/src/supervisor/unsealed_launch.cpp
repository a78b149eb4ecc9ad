#include "supervisor/unsealed_launch.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/paths.hpp"

namespace px::supervisor {

Result<int> run_unsealed(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         const std::filesystem::path& cwd, int cgroup_fd) {
  const auto path_it = env.find("PATH");
  auto exe = find_executable(argv[0], path_it == env.end() ? "/usr/bin:/bin" : path_it->second);
  if (!exe) {
    std::fprintf(stderr, "parallex: %s: command not found\n", argv[0].c_str());
    return 127;
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  // The terminal's ^C reaches the child; the supervisor waits it out.
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = ::fork();
  if (pid < 0) return Error::io("fork", errno);
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    // Into the run's cgroup before exec, so the kill switch sees the whole tree.
    if (cgroup_fd >= 0) {
      const int procs = ::openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
      if (procs < 0 || ::write(procs, "0\n", 2) != 2) {
        std::fprintf(stderr, "parallex: cannot enter the run's cgroup: %s\n", std::strerror(errno));
        _exit(125);
      }
      ::close(procs);
    }
    if (::chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "parallex: cannot enter %s: %s\n", cwd.c_str(), std::strerror(errno));
      _exit(126);
    }
    ::execve(exe->c_str(), args.data(), envp.data());
    std::fprintf(stderr, "parallex: cannot run %s: %s\n", exe->c_str(), std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace px::supervisor
