// `parallex run [run options] -- CMD...`: runs CMD sealed, as an ad-hoc run
// (no agent). The exit status is the command's; see README "Exit status".
#include "cli/command.hpp"
#include "cli/run_command.hpp"
#include "cli/run_options.hpp"

namespace px::cli {
namespace {

Action setup_run(CLI::App& app, GlobalOptions&) {
  auto inputs = std::make_shared<run::RunInputs>();
  inputs->kind = run::RunKind::adhoc;
  add_run_options(app, inputs->options, RunOptionSet::run, &inputs->command);
  return [inputs] { return run_command(*inputs); };
}

}  // namespace

PARALLEX_COMMAND("run", "Run a command under the seal (ad hoc, without an agent)", 20, setup_run);

}  // namespace px::cli
