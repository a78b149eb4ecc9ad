#pragma once
// Launching a command under the Linux seal. The one ordered function that
// applies the seal's steps lives in launch.cpp (run_init); this is its API.
//
//   supervisor ──fork──► outer (user + pid namespaces) ──fork──► init, pid 1 (mounts, net, view,
//   proc, Landlock ruleset) ──fork──► command (caps dropped, no_new_privs, Landlock, seccomp, execve)
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/linux/audit_log.hpp"
#include "backend/linux/refusals.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "policy/policy.hpp"

namespace px::seal {

namespace fs = std::filesystem;

using EnvMap = std::map<std::string, std::string>;

// What the seal's init hands the supervisor when the run may use the network,
// all made inside the run's network namespace.
struct NetworkHandOff {
  UniqueFd proxy_listener;  // the proxy's listening socket on 127.0.0.1 (port chosen by the kernel)
  std::uint16_t proxy_port = 0;
  // With a network namespace (all empty in a weaker seal without one): the
  // run's DNS sockets (127.0.0.1:53, [::1]:53), the socket channel over which
  // the init makes listening and connecting sockets inside the run on request
  // (common/socket_request.hpp), and the synthetic ranges routed to lo
  // ("198.18.0.0/15 fdXX:XXXX:XXXX::/64", net_capture.hpp).
  std::vector<UniqueFd> dns_udp;
  std::vector<UniqueFd> dns_tcp;
  UniqueFd socket_channel;
  std::string synthetic_ranges;
};

// Called in the supervisor with the run's network sockets. The proxy adopts
// them; the hook returns variables to add to the command's environment
// (HTTP_PROXY with the per-run password...). Landlock then lets the command
// connect over TCP to the proxy's port, the DNS port and the ports the rule
// allows (which, in the run's namespace, reach only the proxy's listeners).
using ProxySocketHook = std::function<Result<EnvMap>(NetworkHandOff handoff)>;

struct LaunchSpec {
  const policy::Policy* policy = nullptr;  // required; outlives the launch
  fs::path executable;                     // absolute, from resolve_command()
  std::vector<std::string> argv;           // argv[0] as the user typed it
  EnvMap env;                              // the final environment (Policy::environment().apply(...))
  fs::path cwd;                            // default: the policy's run folder
  // Run with the steps the kernel allows when a guarantee is missing (the user's
  // explicit --allow-weaker-seal); otherwise a missing guarantee fails the launch.
  bool allow_weaker_seal = false;
  // Without a proxy hook every sealed run is offline: its namespace has only lo.
  bool want_proxy_socket = false;
  ProxySocketHook on_proxy_socket;
  // The run's cgroup (an O_DIRECTORY fd), or -1: the seal's first process
  // enters it right after fork, before it can start anything, so no process
  // of the run is ever outside it (the kill switch freezes the whole cgroup).
  int cgroup_fd = -1;
};

struct LaunchResult {
  int exit_code = 0;               // the command's status; 128+N for signal N; 127/126 when it could not run
  std::string message;             // why the command could not run (exit 126/127), else empty
  std::vector<std::string> notes;  // what the seal left out or could not enforce
  Refusals refusals;               // what the seal refused, where the kernel told us
};

// A started seal: `pid` is the outer process (the supervisor may put it in a cgroup).
struct SealedProcess {
  pid_t pid = -1;
  UniqueFd control;  // supervisor end of the control socket
  const LaunchSpec* spec = nullptr;
  std::vector<std::string> notes;
  std::optional<audit::LandlockLog> landlock_log;  // when the kernel audit log is readable
  std::string landlock_not_collected;              // else why Landlock's refusals go unrecorded
};

// `name` resolved against the PATH of `env` (or taken as a path), and checked
// readable under the policy. not_found -> exit 127; policy -> exit 126.
Result<fs::path> resolve_command(const std::string& name, const EnvMap& env, const policy::Policy& policy);

// Forks the seal. Everything the child needs (view plan, Landlock plan,
// seccomp BPF, argv, envp) is prepared before the fork.
Result<SealedProcess> spawn(const LaunchSpec& spec);
// Serves the control socket (proxy hand-off, setup errors), then reaps the seal.
// SIGINT and SIGQUIT are ignored meanwhile (they reach the command from the tty).
// A setup failure is an Error; the command's own failure is an exit code.
Result<LaunchResult> wait(SealedProcess& process);
// spawn + wait.
Result<LaunchResult> run(const LaunchSpec& spec);

// Exit code for "the seal could not be set up" (as env(1) and docker use).
inline constexpr int kSetupFailed = 125;

}  // namespace px::seal
