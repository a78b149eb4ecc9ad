#pragma once
// The client side of the kill switch, for `parallex runs/pause/resume/kill`
// and the benchmark: pick runs from the registry, send them one request each
// (in parallel, so pausing five runs takes as long as the slowest one).
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/registry.hpp"

namespace px::killswitch {

struct RunSelection {
  bool all = false;
  std::string target;  // a run id (or a unique prefix of one), or an agent name
};

// The live runs that `selection` names; an error naming what exists when none does.
Result<std::vector<RunEntry>> select_runs(const fs::path& runtime_dir, const RunSelection& selection);

struct RunOpOutcome {
  RunEntry run;
  bool ok = false;
  std::string error;
  nlohmann::json reply;  // the supervisor's, when it answered
  // When the supervisor did not answer and the command acted on the run
  // itself (killswitch/direct_control.hpp): what it did, as a sentence.
  std::string direct;
};

// Sends {"v":1,"op":op,"by":by} to each run's supervisor, in parallel. A
// supervisor that is stopped, or does not answer within `answer_within`, is
// not waited for: the run is paused, resumed or killed without it.
std::vector<RunOpOutcome> request_runs(const std::vector<RunEntry>& runs, const std::string& op,
                                       const std::string& by,
                                       std::chrono::milliseconds answer_within = kAnswerWithin);

// pause --all also writes the pause file first (new runs start paused), then pauses
// every live run; pause NAME|RUN-ID pauses those runs only. Refused inside a run.
Result<std::vector<RunOpOutcome>> pause_runs(const fs::path& runtime_dir, const RunSelection& selection);
// resume --all removes the pause file too.
Result<std::vector<RunOpOutcome>> resume_runs(const fs::path& runtime_dir, const RunSelection& selection);
Result<std::vector<RunOpOutcome>> kill_runs(const fs::path& runtime_dir, const RunSelection& selection);

}  // namespace px::killswitch

namespace px::killswitch {

// `parallex pause|resume|kill` as one call, for the commands and `parallex ui`
// alike: the runs acted on, and `json` as `--json` prints it: {"runs": [{id,
// agent, ok, error, state, direct}], "note": "..."}; `note` says what holds
// after it (the global pause).
struct KillSwitchDone {
  std::vector<RunOpOutcome> outcomes;
  std::string note;
  nlohmann::json json;
  bool all_ok = true;
};
// `op`: "pause", "resume" or "kill".
Result<KillSwitchDone> kill_switch_act(const fs::path& runtime_dir, const std::string& op,
                                       const RunSelection& selection);

}  // namespace px::killswitch
