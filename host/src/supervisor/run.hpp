#pragma once
// One run, end to end: start the run's proxy (unless offline), launch the
// command through the backend (sealed or not), wait, and write the run record.
// Agent runs, ad-hoc runs and workspaced runs all come through here.
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/policy.hpp"

namespace px::supervisor {

namespace fs = std::filesystem;

struct RunRequest {
  explicit RunRequest(policy::Policy p) : policy(std::move(p)) {}

  policy::Policy policy;
  std::vector<std::string> argv;                // argv[0] as the user typed it
  std::map<std::string, std::string> host_env;  // the caller's environment (the policy filters it)
  fs::path cwd;                                 // usually policy.run_folder()
  std::string agent;                            // empty for ad-hoc runs
  fs::path runs_dir;                            // the run's record goes to runs_dir/RUN-ID/
  bool sealed = true;                           // false: `--unsealed`, said in one line
  bool accept_weaker_seal = false;              // run even where a guarantee is missing
  // Where decoy credentials were planted (an agent's home); opens of them
  // during the run are recorded as "decoy_hits" and printed at the end.
  fs::path decoy_home;
  // Extra fields for run.json (e.g. the repository refs at start).
  nlohmann::json record_extra = nlohmann::json::object();
  // Called after the command ended, before run.json is written; may add fields.
  std::function<void(nlohmann::json& record)> on_finish;
};

struct RunOutcome {
  std::string run_id;
  int exit_status = 0;  // the command's; 128+N for a signal; 127 when not found
  fs::path record_dir;  // runs_dir/RUN-ID
  std::vector<std::string> refused_hosts;
  std::vector<std::string> notices;     // what the seal could not guarantee, refusals seen
  std::vector<std::string> decoy_hits;  // one line per open of a decoy credential
  std::string seal_refusals;            // "the seal refused 2 requests: ptrace (sh), ..." or empty
};

// A new run id: time-sortable and unique ("20261129-190433-4f2a").
std::string new_run_id();

Result<RunOutcome> run(RunRequest request);

}  // namespace px::supervisor
