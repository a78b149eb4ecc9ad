// `parallex workspace new|list|rm|agent`: disposable git workspaces of the
// current repository (worktrees on a branch parallex/NAME, kept in
// <repo>/.parallex/workspaces/NAME). `workspace agent NAME -- CMD` is a
// workspaced tab as an agent (`agent -w`). See docs/workspaces.md.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/workspace_cli.hpp"
#include "common/paths.hpp"
#include "killswitch/registry.hpp"
#include "workspace/config.hpp"
#include "workspace/project.hpp"
#include "workspace/workspace.hpp"

namespace px::cli {
namespace {

namespace ws = px::workspace;
namespace fs = std::filesystem;

Result<ws::Project> current_project() {
  PX_TRY_ASSIGN(auto project, ws::find_project(fs::current_path()));
  // A malformed config is reported by every command, not only by runs.
  PX_TRY(ws::load_project_config(project.config_file()));
  return project;
}

std::string ahead_behind(const ws::WorkspaceInfo& w) {
  if (!w.ahead || !w.behind) return "-";
  return "+" + std::to_string(*w.ahead) + "/-" + std::to_string(*w.behind);
}

std::string short_base(const std::string& base) {
  for (const char* prefix : {"refs/heads/", "refs/remotes/", "refs/tags/"})
    if (base.rfind(prefix, 0) == 0) return base.substr(std::char_traits<char>::length(prefix));
  return base.size() == 40 ? base.substr(0, 7) : base;
}

int do_new(const std::optional<std::string>& name, const std::optional<std::string>& from, bool json) {
  auto project = current_project();
  if (!project) return report_error(project.error());
  auto w = ws::create_workspace(project.value(), {name, from});
  if (!w) return report_error(w.error());
  if (json) {
    print_json(w.value().to_json());
  } else {
    std::printf("Made workspace %s at %s\n  branch %s, from %s (%s)\n", w.value().name.c_str(),
                w.value().path.c_str(), w.value().branch.c_str(), short_base(w.value().base).c_str(),
                w.value().base_commit.substr(0, 7).c_str());
  }
  return 0;
}

int do_list(bool json) {
  auto project = current_project();
  if (!project) return report_error(project.error());
  auto list = ws::list_workspaces(project.value());
  if (!list) return report_error(list.error());
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& w : list.value()) out.push_back(w.to_json());
    print_json(out);
    return 0;
  }
  if (list.value().empty()) {
    std::printf("No workspaces in %s. Make one with `parallex workspace new NAME`.\n",
                project.value().root.c_str());
    return 0;
  }
  std::printf("%-20s %-28s %-8s %-10s %-14s %s\n", "NAME", "BRANCH", "STATE", "+AHEAD/-BEHIND", "BASE",
              "PATH");
  for (const auto& w : list.value()) {
    const std::string state = w.folder_missing ? "missing" : w.dirty ? "dirty" : "clean";
    std::printf("%-20s %-28s %-8s %-14s %-14s %s\n", w.name.c_str(), w.branch.c_str(), state.c_str(),
                ahead_behind(w).c_str(), short_base(w.base).c_str(), w.path.c_str());
  }
  return 0;
}

int do_rm(const std::string& name, bool force) {
  auto project = current_project();
  if (!project) return report_error(project.error());
  // Not under a run that works in it (--force is about your changes, not this).
  if (auto id = killswitch::live_run_in(parallex_runtime_dir(), project.value().workspaces_dir() / name))
    return report_error(
        Error::conflict("The run " + *id + " is working in workspace " + name +
                        "; removing it now would pull the folder from under the run. End the run "
                        "first (`parallex kill " +
                        *id + "`), then remove it."));
  auto removed = ws::remove_workspace(project.value(), name, force);
  if (!removed) return report_error(removed.error());
  if (!removed.value().discarded.empty()) {
    std::printf("Removed workspace %s (--force) and threw away:\n", name.c_str());
    for (const auto& line : removed.value().discarded) std::printf("  %s\n", line.c_str());
  } else {
    std::printf("Removed workspace %s and its branch %s\n", name.c_str(), ws::branch_for(name).c_str());
  }
  return 0;
}

Action setup_workspace(CLI::App& app, GlobalOptions&) {
  app.require_subcommand(1);
  struct Options {
    std::optional<std::string> name, from;
    std::string rm_name;
    bool json = false, force = false;
    workspace_cmd::WorkspacedRun agent_run;
  };
  auto o = std::make_shared<Options>();
  auto action = std::make_shared<Action>();

  auto* make = app.add_subcommand("new", "Make a workspace: a git worktree on a new branch parallex/NAME");
  make->add_option("name", o->name, "Its name (default: a fresh ws-XXXX)");
  make->add_option("--from", o->from, "Start from this branch, tag or commit (default: the current branch)");
  make->add_flag("--json", o->json, "Print it as JSON");
  make->callback([o, action] { *action = [o] { return do_new(o->name, o->from, o->json); }; });

  auto* list = app.add_subcommand("list", "List the workspaces: branch, state, ahead/behind its base, path");
  list->add_flag("--json", o->json, "Print them as JSON");
  list->callback([o, action] { *action = [o] { return do_list(o->json); }; });

  auto* rm =
      app.add_subcommand("rm", "Remove a workspace and its branch (refuses to lose work without --force)");
  rm->add_option("name", o->rm_name, "The workspace")->required();
  rm->add_flag("--force", o->force, "Remove it even with uncommitted changes or commits nothing else holds");
  rm->callback([o, action] { *action = [o] { return do_rm(o->rm_name, o->force); }; });

  auto* agent =
      app.add_subcommand("agent", "Run a command as an agent in a fresh workspace, sealed to it (agent -w)");
  agent->add_option("agent", o->agent_run.agent, "The agent (see `parallex agent list`)")->required();
  workspace_cmd::add_workspaced_run_options(*agent, o->agent_run);
  agent->callback([o, action] { *action = [o] { return workspace_cmd::run_workspaced(o->agent_run); }; });

  return [action] { return *action ? (*action)() : 2; };
}

// `parallex agent -w NAME [--offline] [--name N] ... -- CMD`: the same as
// `workspace agent NAME ...`, spelled as the seed spells it.
std::function<Action()> setup_agent_workspace(CLI::App& agent_app) {
  auto run = std::make_shared<workspace_cmd::WorkspacedRun>();
  CLI::Option* w = agent_app.add_option(
      "-w,--workspace", run->agent, "Run as agent NAME in a fresh workspace, sealed to it: -w NAME -- CMD");
  // The options -w takes are the ones add_workspaced_run_options declares, read
  // back from the app rather than listed again (a second list drifted: it
  // missed --env, and `agent --env X set bot` dropped it without a word).
  const std::vector<CLI::Option*> before = agent_app.get_options();
  workspace_cmd::add_workspaced_run_options(agent_app, *run);
  std::vector<CLI::Option*> of_w;
  for (CLI::Option* opt : agent_app.get_options())
    if (std::find(before.begin(), before.end(), opt) == before.end()) of_w.push_back(opt);
  // In `parallex agent --help` these belong to -w, apart from the sub-commands.
  for (CLI::Option* opt : of_w) opt->group("With -w NAME (a workspaced tab)");
  w->group("With -w NAME (a workspaced tab)");
  return [run, w, of_w, &agent_app]() -> Action {
    if (w->count() > 0 && !agent_app.get_subcommands().empty())
      return [sub = agent_app.get_subcommands().front()->get_name()] {
        return report_error(
            Error::invalid("-w belongs to `parallex agent -w NAME -- CMD`; it does not combine "
                           "with `agent " +
                           sub + "` (see its --help)."));
      };
    if (w->count() > 0 && run->agent.empty())
      return [] {
        return report_error(Error::invalid("-w needs the agent's name: `parallex agent -w NAME -- CMD`"));
      };
    if (w->count() == 0) {
      // Options of -w given to a sub-command (`agent set bot --offline`) are
      // not silently dropped: the sub-command does not take them.
      for (const CLI::Option* opt : of_w) {
        if (opt->get_positional() || opt->count() == 0) continue;  // the command: checked below
        // Set by its environment variable (PARALLEX_ALLOW_WEAKER_SEAL in a
        // container image), not given on the command line: the sub-command
        // reads the same variable itself.
        if (!opt->get_envname().empty() && std::getenv(opt->get_envname().c_str())) continue;
        const std::string name = opt->get_name();
        // Given before a sub-command that takes it too (`agent --env X set bot`).
        for (const CLI::App* sub : agent_app.get_subcommands())
          if (sub->get_option_no_throw(name))
            return [name, sub = sub->get_name()] {
              return report_error(Error::invalid(name + " was given before `" + sub +
                                                 "`, where `agent` reads it " +
                                                 "as an option of -w: give it after `" + sub +
                                                 "` (`parallex agent " + sub + " … " + name + " …`)"));
            };
        if (!agent_app.get_subcommands().empty())
          return [name, sub = agent_app.get_subcommands().front()->get_name()] {
            return report_error(Error::invalid(name +
                                               " belongs to `parallex agent -w NAME -- CMD`; it does not " +
                                               "combine with `agent " + sub + "` (see its --help)."));
          };
        return [name] {
          return report_error(
              Error::invalid(name + " belongs to `parallex agent -w NAME -- CMD`: give -w NAME with it"));
        };
      }
      if (!run->command.empty())
        return [run] {
          return report_error(Error::invalid("`parallex agent` has no sub-command `" + run->command.front() +
                                             "`; see `parallex agent --help`."));
        };
      return {};
    }
    return [run] { return workspace_cmd::run_workspaced(*run); };
  };
}

}  // namespace

PARALLEX_COMMAND_EXTENSION("agent", setup_agent_workspace);

PARALLEX_COMMAND("workspace", "Disposable git workspaces of this repository: new, list, rm, agent", 13,
                 setup_workspace);

}  // namespace px::cli
