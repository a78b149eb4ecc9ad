#pragma once
// The run options on the command line: one spelling for every command that
// runs something (`run`, `agent run`, `harness -w`, `agent -w`) and for the
// ones that show what a run would get (`policy show`).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "run/options.hpp"

namespace px::cli {

enum class RunOptionSet {
  policy,  // what shapes the policy: --harness --profile --in --grant --online --offline --allow --local-servers
  run,     // the same, plus --unsealed and --allow-weaker-seal
  workspace,  // `run` without --in: a workspaced run works in its fresh workspace
};

// Declares the options on `app`; with `command`, the command after `--` too.
void add_run_options(CLI::App& app, run::RunOptions& options, RunOptionSet set,
                     std::vector<std::string>* command = nullptr);

}  // namespace px::cli
