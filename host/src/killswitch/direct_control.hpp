#pragma once
// The kill switch without the supervisor: `pause`, `resume` and `kill` act on
// a run whose supervisor does not answer (stopped with SIGSTOP, hung in a
// system call, frozen) by themselves, so that "stop everything" never
// depends on the process it is stopping.
//
// What they act on comes from the run's registry entry (written by its
// supervisor, in the user's 0700 runtime dir): the run's cgroup, where
// cgroup.freeze and cgroup.kill hold every process of the run however it
// detached; without one, the run's process tree from its first process,
// named by pid and start time (a reused pid is another process and is left
// alone), and the orphans that came back to the supervisor.
//
// What was done is left for the supervisor in runs/<id>.direct
// ({op, by, why, at}), written before the action: the supervisor takes it in
// when it goes on (RunControl::take_direct), so a run whose supervisor is
// continued later is held as the user left it (paused by a `pause --all`, or
// killed, in its record) and its network follows.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "killswitch/registry.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

// Why the supervisor of `entry` will not answer now ("is stopped
// (SIGSTOP)"), or nullopt when it may: read from /proc, so a stopped one is
// acted on at once instead of after the time-out.
std::optional<std::string> supervisor_cannot_answer(const RunEntry& entry);

// Does `op` (pause, resume, kill) to the run of `entry` without its
// supervisor; `why` says why ("is stopped (SIGSTOP)", "did not answer within
// 1000 ms"), after "its supervisor (pid N)". Returns what
// was done, as a sentence for the user.
Result<std::string> act_directly(const fs::path& runs_dir, const RunEntry& entry, const std::string& op,
                                 const std::string& by, const std::string& why);

struct DirectOp {
  std::string op, by, why, at;
};
// For the supervisor: what a client did to its run meanwhile, taken (the file
// is removed), or nullopt.
std::optional<DirectOp> take_direct_op(const fs::path& runs_dir, const std::string& run_id);
// runs/<id>.direct.
fs::path direct_op_file(const fs::path& runs_dir, const std::string& run_id);
// The state the run was left in by a direct op not yet taken in ("paused",
// "running", "killed"), or nullopt: what `parallex runs` shows for a run whose
// supervisor is stopped.
std::optional<std::string> pending_direct_state(const fs::path& runs_dir, const std::string& run_id);

}  // namespace px::killswitch
