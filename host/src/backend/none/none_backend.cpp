// The none backend: the command runs as a plain child of the supervisor, with
// the policy's environment and nothing else: no view, no Landlock, no seccomp,
// no network namespace. Used only when the user chose an unsealed run; the run
// says so on the terminal and in its record. Kept apart from the Linux seal so
// that the sealed path never shares code that could quietly skip a step.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "backend/backend.hpp"

namespace px::backend {

namespace {

// The proxy listens on the host's loopback: tools that honour proxy
// variables still go through it (and its log), nothing else is held.
Result<std::pair<UniqueFd, std::uint16_t>> listen_on_host_loopback() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error::io("socket for the run's proxy", errno);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || ::listen(fd.get(), 128) != 0)
    return Error::io("listen on 127.0.0.1 for the run's proxy", errno);
  socklen_t len = sizeof sin;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sin), &len) != 0)
    return Error::io("getsockname of the run's proxy", errno);
  return std::make_pair(std::move(fd), ntohs(sin.sin_port));
}

class NoneBackend final : public Backend {
 public:
  const char* name() const override { return "none"; }
  std::string platform() const override { return "no seal"; }

  std::vector<Guarantee> guarantees(Probe) const override {
    return {{"none", "no seal: the command can read and write what you can", false, true,
             "an unsealed run, chosen by its user"}};
  }

  Result<LaunchResult> launch(const LaunchRequest& request) override {
    EnvMap env = request.env;
    if (request.on_proxy_socket) {
      PX_TRY_ASSIGN(auto listener, listen_on_host_loopback());
      NetworkHandOff handoff;
      handoff.proxy_listener = std::move(listener.first);
      handoff.proxy_port = listener.second;
      PX_TRY_ASSIGN(auto added, request.on_proxy_socket(std::move(handoff)));
      for (auto& [k, v] : added) env[k] = v;
    }
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp, args;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv = request.argv;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);

    // The terminal's ^C reaches the child; the supervisor waits it out.
    struct sigaction ignore {
    }, old_int{}, old_quit{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int);
    ::sigaction(SIGQUIT, &ignore, &old_quit);
    // The command waits for the supervisor's own set-up (on_started): one
    // byte on this pipe, or its end when that set-up failed.
    int gate[2];
    if (::pipe2(gate, O_CLOEXEC) != 0) return Error::io("pipe2 for the command's start", errno);
    UniqueFd gate_read(gate[0]), gate_write(gate[1]);
    const pid_t pid = ::fork();
    if (pid < 0) return Error::io("fork the command", errno);
    if (pid == 0) {
      gate_write.reset();
      ::sigaction(SIGINT, &old_int, nullptr);
      ::sigaction(SIGQUIT, &old_quit, nullptr);
      sigset_t none;
      ::sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      // Into the run's cgroup before exec, so the kill switch sees the whole tree.
      if (request.cgroup_fd >= 0) {
        const int procs = ::openat(request.cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        if (procs < 0 || ::write(procs, "0\n", 2) != 2) {
          std::fprintf(stderr, "parallex: cannot enter the run's cgroup: %s\n", std::strerror(errno));
          ::_exit(125);
        }
        ::close(procs);
      }
      char go = 0;
      ssize_t got;
      while ((got = ::read(gate_read.get(), &go, 1)) < 0 && errno == EINTR) {
      }
      if (got != 1) ::_exit(125);
      if (::chdir(request.cwd.c_str()) != 0) {
        std::fprintf(stderr, "parallex: cannot enter %s: %s\n", request.cwd.c_str(), std::strerror(errno));
        ::_exit(126);
      }
      ::execve(request.executable.c_str(), args.data(), envp.data());
      std::fprintf(stderr, "parallex: cannot run %s: %s\n", request.executable.c_str(), std::strerror(errno));
      ::_exit(errno == ENOENT ? 127 : 126);
    }
    gate_read.reset();
    const Status ready = request.on_started ? request.on_started(pid, request.cgroup_fd >= 0) : ok();
    if (ready) (void)!::write(gate_write.get(), "g", 1);
    gate_write.reset();
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (ready && request.on_command_ended) request.on_command_ended();
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    if (!ready) return ready.error();
    LaunchResult result;
    result.notes.push_back({run::NoticeKind::unsealed, "no filesystem, process or network confinement"});
    result.refusals.not_collected.push_back("an unsealed run refuses nothing");
    if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
      result.exit_code = 128 + result.signal;
    } else {
      result.exit_code = WEXITSTATUS(status);
    }
    return result;
  }
};

}  // namespace

Backend& none_backend() {
  static NoneBackend backend;
  return backend;
}

}  // namespace px::backend
