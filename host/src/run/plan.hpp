#pragma once
// RunPlan: everything a run needs, decided before anything starts, by the run
// stage's prepare_run() (run/stage.hpp) from the inputs of any front door.
// The supervisor carries it out; nothing in it changes afterwards.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.hpp"
#include "policy/policy.hpp"
#include "run/notice.hpp"
#include "run/record.hpp"
#include "run/status.hpp"

namespace px::run {

namespace fs = std::filesystem;

// Where a run keeps things on the host.
struct RunDirs {
  fs::path runs_dir;     // its record goes to runs_dir/RUN-ID/ (kept)
  fs::path private_dir;  // 0700, the run's private state, never in its view; removed at its end
  fs::path temp_dir;     // private_dir/tmp: /tmp and /var/tmp inside the seal
  // The private dir's flock, held while the run lives (run/private_dir.hpp).
  std::shared_ptr<UniqueFd> private_lock;
};

// A command that cannot run (not found, or not readable under the policy):
// the run is recorded with this status and message, and nothing starts.
struct CommandProblem {
  RunStatus status = RunStatus::not_found;
  std::string message;
};

struct RunPlan {
  RunPlan(policy::Policy p) : policy(std::move(p)) {}  // NOLINT: a plan is made from its policy

  policy::Policy policy;
  std::vector<std::string> argv;                  // argv[0] as the user typed it
  fs::path executable;                            // argv[0] resolved (PATH of the run's environment)
  std::optional<CommandProblem> command_problem;  // set when it cannot be resolved or read
  std::map<std::string, std::string> env;         // the policy's environment; the supervisor adds the proxy's
  // Secrets parallex holds for the run's brokered credentials (the agent's
  // token), by credential name: the Policy names only their holder. Handed
  // to the broker in the supervisor, never written anywhere.
  std::map<std::string, std::string> held_secrets;
  fs::path cwd;  // usually the run folder
  RunDirs dirs;
  SealLevel seal = SealLevel::full;  // decided once from the guarantees and the user's choice
  // The user accepted a weaker seal: the backend may still find a guarantee
  // missing at launch that the quick probe cannot see (a container runtime's
  // seccomp profile refusing new user namespaces), and then runs weaker and
  // says so instead of refusing.
  bool allow_weaker_seal = false;
  std::string backend;                        // "linux", "none" (unsealed), "seatbelt"
  std::vector<Notice> notices;                // said before the run starts (weaker seal, grants resolved)
  std::string agent;                          // empty for ad-hoc runs
  fs::path decoy_home;                        // decoy credentials watched during the run, or empty
  RunRecord record;                           // fields known before the run (refs, workspace, snapshot)
  std::function<void(RunRecord&)> on_finish;  // fields known only at its end (refs, changed files)
};

}  // namespace px::run
