#pragma once
// Starts an agent run through the supervisor (supervisor::run). Until the
// supervisor is built in, an `--unsealed` run is started directly (same
// environment from the policy, same run record fields) and a sealed one is
// refused: a run is never quietly less sealed than asked.
#include "common/error.hpp"
#include "supervisor/run.hpp"

namespace px::agents {

Result<supervisor::RunOutcome> launch(supervisor::RunRequest request);

// A run id, from the supervisor when it is built in.
std::string new_run_id();

}  // namespace px::agents
