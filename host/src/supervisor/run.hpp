#pragma once
// supervisor::run — carries out a RunPlan: the record, the kill switch, the
// proxy, the decoys, the launch through the backend, and the record's end.
// Every front door (run, agent run, harness -w, agent -w, demo, check
// --sealed) comes through here via the run stage (run/stage.hpp). It prints
// nothing: what the user must hear goes to the observer, and into the record.
#include <filesystem>
#include <functional>
#include <string>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "run/notice.hpp"
#include "run/plan.hpp"
#include "run/record.hpp"

namespace px::supervisor {

namespace fs = std::filesystem;

struct RunObserver {
  // Said while the run goes on (a pause, a refused request the user should
  // see at once). Called from any thread of the supervisor, one at a time.
  std::function<void(const run::Notice&)> notice;
  // The record says `running`: the command's first process exists and is
  // building its seal.
  std::function<void(const run::RunRecord&)> started;
};

struct RunResult {
  run::RunRecord record;  // as written, finished
  fs::path record_dir;    // runs_dir/RUN-ID
  int exit_status() const { return record.exit_status.value_or(run::kExitSetupFailed); }
};

// A new run id: time-sortable and unique ("20261129-190433-4f2a").
std::string new_run_id();

// Carries out `plan` with `backend`. Whatever fails (or throws) once the
// record exists, the record is finished (end time, status, exit status) and
// the run's private dir removed; an Error comes back only when no record
// could be made.
// SIGTERM, SIGHUP and a SIGINT sent to the supervisor (not the terminal's
// ^C, which reaches the command) end the run: its processes are killed and
// the status says so.
Result<RunResult> run(run::RunPlan plan, backend::Backend& backend, const RunObserver& observer);

}  // namespace px::supervisor
