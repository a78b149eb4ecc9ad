#pragma once
// The run stage: the one path every command that runs something takes.
//
//   RunInputs ──prepare_run()──► PreparedRun {RunPlan, Backend} ──execute()──► supervisor::RunResult
//
// prepare_run decides everything before anything starts: the policy, the
// command and its environment, the run's dirs, and the seal's level from the
// guarantees the kernel offers and the user's choice. Front doors (cli/cmd_*)
// only parse options, call these two, and print.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "policy/profile.hpp"
#include "run/compose_request.hpp"
#include "run/options.hpp"
#include "run/plan.hpp"
#include "supervisor/run.hpp"

namespace px::run {

enum class RunKind { adhoc, agent, workspace, demo, check };

// A credential parallex holds for the run (a workspace's token, the agent's),
// brokered by default: the Policy gets the description, the plan the secret.
struct HeldCredential {
  policy::BrokeredCredential credential;  // source: kind value, empty, with its holder
  std::string secret;
};

struct RunInputs {
  RunKind kind = RunKind::adhoc;
  RunOptions options;
  std::vector<std::string> command;  // after --
  std::string agent;                 // agent runs (and workspaced ones as an agent): its name
  // What a front door adds: a workspace's profile, variables and record fields.
  std::vector<policy::Profile> extra_profiles;
  std::map<std::string, std::string> extra_env;
  std::set<std::string> secret_env;
  std::optional<fs::path> cwd;       // default: the run folder
  fs::path runs_dir;                 // default: the agent's runs, or the ad-hoc runs dir
  RunRecord record;                  // fields known before the run
  std::function<void(RunRecord&)> on_finish;
  std::string unsealed_because;      // with options.unsealed: who chose it (said in the notice)
  std::map<std::string, std::string> host_env;  // default: this process's environment
  // Brokered by default (a workspace's .parallex/github-token); an agent run
  // adds the agent's own token.
  std::vector<HeldCredential> held_credentials;
};

struct PreparedRun {
  RunPlan plan;
  backend::Backend* backend = nullptr;
};

// Everything checked and decided; the only things made are the run's private
// dir (removed by the run's end) and, for an agent, its git identity and the
// snapshot of its home (last, once nothing else can fail). An error here
// means nothing ran (exit status 125).
Result<PreparedRun> prepare_run(RunInputs inputs);

// Whether a run with these options may start on this kernel: the same
// decision prepare_run takes, for front doors that must know before they
// make anything (a workspace).
Status check_seal(const RunOptions& options);

// Whether the options' own inputs hold: the profile loads, each grant is one
// a run may get. Checked, as the seal is, before a front door makes anything
// (a workspace); prepare_run checks them again.
Status check_options(const RunOptions& options);

// The policy a run of `command` with these options would get, composed as
// prepare_run composes it (with `agent`: its store, rules and token), for the
// commands that only render it (`parallex kube`). Nothing is made.
Result<ComposedPolicy> compose_run_policy(const RunOptions& options, const std::vector<std::string>& command,
                                          const std::string& agent);

// Carries out the plan through the supervisor.
Result<supervisor::RunResult> execute(PreparedRun prepared, const supervisor::RunObserver& observer);

// The line an unsealed run says first; `because` names who chose it.
std::string unsealed_notice(const std::string& because);

// Where ad-hoc runs keep their records.
fs::path adhoc_runs_dir();

// The guarantees the seal needs that this kernel lacks ("Landlock: ...; seccomp: ..."), empty when none.
std::string missing_guarantees(const std::vector<backend::Guarantee>& guarantees);

}  // namespace px::run
