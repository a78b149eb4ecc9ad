#pragma once
// How a run ended, decided from what the supervisor knows at its end: one
// pure function, so every way a run can end is a row of a table its test
// walks. The exit status follows from the status (run/status.hpp).
#include <optional>

#include "run/status.hpp"

namespace px::run {

struct RunOutcome {
  // The launch came back with the command's end (its process existed);
  // false when the run ended before its command started.
  bool launched = false;
  int exit_code = 0;         // the command's exit code (launched)
  int signal = 0;            // the signal that ended the command (launched), 0 when none did
  bool launch_said = false;  // the launch said why the command could not run (exit 126 or 127)
  int stop_signal = 0;       // a stop signal the supervisor received (SIGTERM, SIGHUP, SIGINT), 0 when none
  bool killed = false;       // the kill switch killed the run (`parallex kill`, done by it or without it)
  // The run stage found the command missing or unreadable, so nothing was
  // started: not_found or not_executable.
  std::optional<RunStatus> command_problem;
  bool step_failed = false;  // a step of the supervisor failed (or threw) before the command started
};

RunStatus classify(const RunOutcome& outcome);

}  // namespace px::run
