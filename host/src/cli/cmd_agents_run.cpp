// `parallex agent run NAME [run options] -- CMD...`: runs a command as the
// agent (its home, git, gh and harness config), through its network rules,
// after a snapshot of its home. The run options override the agent's
// settings for this run. The exit status is the command's.
#include "cli/agents_cli.hpp"
#include "cli/run_command.hpp"
#include "cli/run_options.hpp"

namespace px::cli::agent_cmd {

Action setup_run(CLI::App& s) {
  auto inputs = std::make_shared<run::RunInputs>();
  inputs->kind = run::RunKind::agent;
  s.add_option("name", inputs->agent, "The agent")->required();
  add_run_options(s, inputs->options, RunOptionSet::run, &inputs->command);
  return [inputs] {
    run::RunInputs in = *inputs;
    if (in.options.unsealed) in.unsealed_because = "--unsealed";
    return run_command(std::move(in));
  };
}

}  // namespace px::cli::agent_cmd
