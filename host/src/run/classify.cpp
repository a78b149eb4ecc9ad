#include "run/classify.hpp"

namespace px::run {

RunStatus classify(const RunOutcome& o) {
  if (!o.launched) {
    // A command that cannot be found or read was never going to start: that
    // is the run's story, unless a step of parallex failed first.
    if (o.command_problem && !o.step_failed) return *o.command_problem;
    return o.stop_signal ? RunStatus::interrupted : RunStatus::setup_failed;
  }
  // Who ended the run comes before how the command died: the user's own
  // stop, then the kill switch (whose SIGKILL is the signal the command died of).
  if (o.stop_signal) return RunStatus::interrupted;
  if (o.killed) return RunStatus::killed;
  if (o.signal) return RunStatus::signaled;
  if (o.launch_said && o.exit_code == kExitNotFound) return RunStatus::not_found;
  if (o.launch_said && o.exit_code == kExitNotExecutable) return RunStatus::not_executable;
  return RunStatus::exited;
}

}  // namespace px::run
