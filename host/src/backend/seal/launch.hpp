#pragma once
// Launching a command under the Linux seal. The one ordered function that
// applies the seal's steps lives in launch.cpp (run_init); this is its API.
//
//   supervisor ──fork──► outer (user + pid namespaces) ──fork──► init, pid 1 (mounts, net, view,
//   proc, Landlock ruleset) ──fork──► command (caps dropped, no_new_privs, Landlock, seccomp, execve)
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/seal/audit_log.hpp"
#include "backend/seal/mounts.hpp"
#include "backend/seal/refusals.hpp"
#include "backend/seal/seccomp.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "policy/policy.hpp"

namespace px::seal {

namespace fs = std::filesystem;

using EnvMap = backend::EnvMap;
using backend::LaunchRequest;
using backend::NetworkHandOff;
using backend::LaunchResult;

// A started seal: `pid` is the outer process (the supervisor may put it in a cgroup).
struct SealedProcess {
  pid_t pid = -1;
  UniqueFd control;  // supervisor end of the control socket
  const LaunchRequest* request = nullptr;
  std::vector<run::Notice> notes;
  std::vector<mounts::Bind> fresh;                 // state dirs shown empty, kept after the run
  std::optional<audit::LandlockLog> landlock_log;  // when the kernel audit log is readable
  std::string landlock_not_collected;              // else why Landlock's refusals go unrecorded
  std::optional<Result<seccomp::Program>> program;  // compiled beside the plan; sent by release()
  pid_t helper = 0;  // spawn_in_cgroup's helper, reaped once the seal is waited for
};

// Forks the seal. What the child needs to build its view (view plan, Landlock
// plan, argv, envp) is prepared before the fork; the seal then builds it while
// the supervisor finishes its own set-up, and waits for release() before the
// command exists. `request` must outlive the wait.
Result<SealedProcess> spawn(const LaunchRequest& request);
// The supervisor is ready for the command (its kill switch armed, the
// protected files watched): compiles the seccomp program, which the seal's
// init has not needed until now, and sends it as the go-ahead. On an error
// the seal is abandoned.
Status release(SealedProcess& process);
// Ends a seal that was never released (the supervisor's own set-up failed):
// no command of it ever started.
void abandon(SealedProcess& process);
// Serves the control socket (proxy hand-off, setup errors), then reaps the seal.
// SIGINT and SIGQUIT are ignored meanwhile (they reach the command from the tty).
// A setup failure is an Error; the command's own failure is an exit code.
Result<LaunchResult> wait(SealedProcess& process);

// Exit code for "the seal could not be set up" (as env(1) and docker use).
inline constexpr int kSetupFailed = 125;

}  // namespace px::seal
