#pragma once
// What every front door that runs something does after parsing: the run
// stage (prepare, execute), with the run's notices printed as they come and
// its summary at the end, and one exit status table (README "Exit status").
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "run/stage.hpp"
#include "supervisor/run.hpp"

namespace px::cli {

// For front doors that say more than the terminal lines (a workspace's events).
struct RunCommandHooks {
  std::function<void(const run::RunPlan&)> prepared;           // before the run starts
  std::function<void(const run::Notice&)> notice;              // every notice, printed or not
  std::function<void(const supervisor::RunResult&)> finished;  // the record is final
  std::function<void(const Error&)> failed;                    // nothing ran
  std::vector<std::string> said_already;                       // notices the front door printed itself
};

// prepare_run -> execute -> print; returns the exit status: the command's,
// 128+N for a signal, 127/126 when it cannot be found or run, 125 when
// Parallex could not start the run.
int run_command(run::RunInputs inputs, const RunCommandHooks& hooks = {});

// The end-of-run lines for refused requests, grouped by reason; log_name
// (when not empty) says where each decision is written:
//   parallex: the run's proxy refused 3 requests (see the run's proxy.jsonl):
//     blocked-by-allowlist: example.com:443 (x2)
//     ip-literal-refused: 1.2.3.4:443
// What the advice reads of the run: its harness and its environment. With
// it, a harness's own traffic (telemetry) to hosts it needs no more, once the
// user pointed it at a server of their own, is said with the switch that
// quiets it instead of an --allow.
struct RefusalContext {
  std::string harness;
  std::map<std::string, std::string> env;
  std::string agent;  // an agent's run: its fix for later runs names it
};
std::string format_refused(const std::vector<run::RefusedRequest>& refused, std::string_view log_name,
                           const RefusalContext* run = nullptr);

}  // namespace px::cli
