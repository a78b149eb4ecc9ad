#pragma once
// How a run ended, and the one table that turns it into an exit status for
// every command that runs something (`run`, `agent run`, `harness -w`,
// `agent -w`, `demo`). Parallex's own failures use the range a user can tell
// apart from the command's: 125 as env(1), timeout(1) and `docker run` do,
// 126/127 as the shell does.
#include <optional>
#include <string>

namespace px::run {

enum class RunStatus {
  starting,        // the record exists, the command has not started (or the supervisor died there)
  running,         // the command runs (or the supervisor died while it ran: see `lost`)
  exited,          // the command exited; its exit code is the run's
  signaled,        // the command died of a signal
  not_found,       // the command could not be found
  not_executable,  // the command was found but cannot be run (or not read under the policy)
  setup_failed,    // the run could not be started: input refused, a guarantee missing, the seal failed
  killed,          // ended by the kill switch (`parallex kill`)
  interrupted,     // the supervisor was told to stop (SIGTERM, SIGHUP, SIGINT sent to it) and ended the run
  lost,            // the supervisor ended without finishing the record (found afterwards)
};

const char* to_string(RunStatus status);
std::optional<RunStatus> status_from_string(const std::string& text);

// Exit status of a run command, from the table in README ("Exit status"):
//   exited -> the command's code; signaled, killed -> 128+N (N: the signal that ended the command);
//   interrupted -> 128+N (N: the signal the supervisor received); not_found -> 127;
//   not_executable -> 126; setup_failed, starting, running, lost -> 125.
int exit_status(RunStatus status, int code, int signal);

inline constexpr int kExitSetupFailed = 125;
inline constexpr int kExitNotExecutable = 126;
inline constexpr int kExitNotFound = 127;

}  // namespace px::run
