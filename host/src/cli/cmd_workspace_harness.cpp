// `parallex harness -w [--offline] [--name N] [--from REF] [--events FILE|fd:N] -- CMD...`:
// a workspaced tab. A fresh git workspace of the current repository, then CMD
// sealed to it: it writes only the workspace, its temp dir and the harness's
// own state; the network is online through the run's proxy (logged) unless
// --offline. See docs/workspaces.md.
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/workspace_cli.hpp"

namespace px::cli {
namespace {

struct HarnessOptions {
  bool workspace = false;
  workspace_cmd::WorkspacedRun run;
};

Action setup_workspace_harness(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<HarnessOptions>();
  app.add_flag("-w,--workspace", o->workspace,
               "Run in a fresh disposable workspace (git worktree), sealed to it");
  workspace_cmd::add_workspaced_run_options(app, o->run);
  return [o] {
    if (!o->workspace)
      return report_error(
          Error::invalid("`parallex harness` runs a command in a fresh workspace: add -w (parallex harness "
                         "-w -- CMD). To run in "
                         "the current folder, use `parallex run -- CMD`."));
    return workspace_cmd::run_workspaced(o->run);
  };
}

}  // namespace

PARALLEX_COMMAND("harness", "Run a harness (any command) in a fresh workspace, sealed to it (-w)", 12,
                 setup_workspace_harness);

}  // namespace px::cli
