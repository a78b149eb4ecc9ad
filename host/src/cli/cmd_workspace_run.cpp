// A workspaced run (`harness -w`, `agent -w`, `workspace agent`): checks every
// input, makes a fresh workspace, and runs the command sealed to it through
// the run stage, with what workspace/run_inputs decides (the seal, the
// network, the workspace's git paths and variables, its scoped GitHub token).
// This file only shows it: messages, and the events the tab host reads as it
// happens (schema: docs/workspaces.md).
#include <cstdio>
#include <cstdlib>

#include "agents/store.hpp"
#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "cli/run_options.hpp"
#include "cli/workspace_cli.hpp"
#include "common/redact.hpp"
#include "run/stage.hpp"
#include "workspace/config.hpp"
#include "workspace/events.hpp"
#include "workspace/github_token.hpp"
#include "workspace/project.hpp"
#include "workspace/run_inputs.hpp"
#include "workspace/workspace.hpp"

namespace px::cli::workspace_cmd {

namespace {

namespace ws = px::workspace;
using nlohmann::json;

int fail(ws::EventSink& events, const Error& error) {
  events.emit("error", {{"message", redact(error.message)}});
  say(error.message);
  return run::kExitSetupFailed;
}

}  // namespace

void add_workspaced_run_options(CLI::App& app, WorkspacedRun& o) {
  app.add_option("--name", o.name, "The workspace's name (default: a fresh ws-XXXX)");
  app.add_option("--from", o.from,
                 "Start the workspace from this branch, tag or commit (default: the current branch)");
  app.add_option("--events", o.events, "Write JSON-lines events to FILE or fd:N (see docs/workspaces.md)");
  add_run_options(app, o.options, RunOptionSet::workspace, &o.command);
}

int run_workspaced(const WorkspacedRun& o) {
  ws::EventSink events;
  if (!o.events.empty()) {
    auto sink = ws::EventSink::open(o.events);
    if (!sink) return fail(events, sink.error());
    events = std::move(sink).value();
  }
  if (o.command.empty())
    return fail(events,
                Error::invalid("give the command to run in the workspace after `--`, e.g. `-- claude`"));

  // Every input is checked before anything is made.
  auto project = ws::find_project(fs::current_path());
  if (!project) return fail(events, project.error());
  const ws::Project& p = project.value();
  auto config = ws::load_project_config(p.config_file());
  if (!config) return fail(events, config.error());
  if (auto trusted = ws::check_config_trust(config.value(), p); !trusted)
    return fail(events, trusted.error());
  std::optional<std::string> token;
  if (!o.agent.empty()) {
    auto agent = agents::find_agent(agents::default_agents_root(), o.agent);
    if (!agent) return fail(events, agent.error());
  } else {
    auto loaded = ws::load_github_token(p.token_file());
    if (!loaded) return fail(events, loaded.error());
    token = std::move(loaded).value();
  }
  if (o.name)
    if (auto s = ws::check_workspace_name(*o.name); !s) return fail(events, s.error());

  auto prepared = ws::prepare_inputs(p, config.value(), {o.options, o.agent, o.command});
  if (!prepared) return fail(events, prepared.error());
  run::RunInputs inputs = std::move(prepared).value();
  // Said first, before anything is made: it is the first line of the tab's output.
  RunCommandHooks hooks;
  if (inputs.options.unsealed) {
    const std::string unsealed = run::unsealed_notice(inputs.unsealed_because);
    say(unsealed);
    std::fflush(stderr);
    events.emit("notice", {{"message", unsealed}, {"kind", run::to_string(run::NoticeKind::unsealed)}});
    hooks.said_already.push_back(unsealed);
  }
  const bool sealed = !inputs.options.unsealed;

  auto created = ws::create_workspace(p, {o.name, o.from});
  if (!created) return fail(events, created.error());
  const ws::WorkspaceInfo& w = created.value();
  events.emit("workspace_created", {{"name", w.name},
                                    {"branch", w.branch},
                                    {"path", w.path.string()},
                                    {"base", w.base},
                                    {"base_commit", w.base_commit},
                                    {"project", p.root.string()}});
  say("workspace " + w.name + " at " + w.path.string() + " (branch " + w.branch + ", from " + w.base + ")");
  // Until the command starts, a failure takes the fresh (clean) workspace back.
  bool started = false;
  if (auto added = ws::add_workspace(inputs, p, w, token); !added) {
    (void)ws::remove_workspace(p, w.name, true);
    return fail(events, added.error());
  }
  const auto node = inputs.extra_env.find("PARALLEX_NODE");
  const std::optional<std::string> parallex_node =
      node != inputs.extra_env.end() ? std::optional<std::string>(node->second) : std::nullopt;

  hooks.failed = [&](const Error& error) {
    if (!started) (void)ws::remove_workspace(p, w.name, true);
    events.emit("error", {{"message", redact(error.message)}});
  };
  hooks.prepared = [&](const run::RunPlan& plan) {
    started = true;
    json hosts = json::array();
    for (const auto& h : plan.policy.network().hosts) hosts.push_back(h.text());
    std::string command;
    for (const auto& a : o.command) command += (command.empty() ? "" : " ") + a;
    if (parallex_node && sealed && !plan.policy.may_read(*parallex_node))
      events.emit("notice", {{"message", "PARALLEX_NODE is " + *parallex_node +
                                             ", which the seal does not let the run read"},
                             {"kind", "environment"}});
    events.emit("run_started",
                {{"workspace", w.name},
                 {"command", redact(command)},
                 {"agent", o.agent},
                 {"harness", plan.policy.harness()},
                 {"sealed", sealed},
                 {"run_folder", plan.policy.run_folder().string()},
                 {"network", {{"mode", policy::to_string(plan.policy.network().mode)}, {"hosts", hosts}}},
                 {"policy_digest", plan.policy.digest()},
                 {"github_token", token.has_value()},
                 {"parallex_node", parallex_node ? json(*parallex_node) : json()}});
  };
  hooks.notice = [&](const run::Notice& n) {
    events.emit("notice", {{"message", redact(n.text)}, {"kind", run::to_string(n.kind)}});
  };
  hooks.finished = [&](const supervisor::RunResult& result) {
    for (const auto& r : result.record.refused)
      events.emit("network_refused",
                  {{"host", r.host}, {"port", r.port}, {"reason", r.reason}, {"count", r.count}});
    json ended{{"workspace", w.name},
               {"run_id", result.record.id},
               {"record", result.record_dir.string()},
               {"exit_status", result.exit_status()},
               {"status", run::to_string(result.record.status)}};
    if (auto after = ws::find_workspace(p, w.name)) {
      ended["changed_files"] = after.value().changes;
      ended["head_commit"] = after.value().head_commit;
      ended["ahead"] = after.value().ahead ? json(*after.value().ahead) : json();
      ended["behind"] = after.value().behind ? json(*after.value().behind) : json();
      say("workspace " + w.name + ": " + std::to_string(after.value().changes.size()) +
          " uncommitted change(s)" +
          (after.value().ahead && *after.value().ahead
               ? ", " + std::to_string(*after.value().ahead) + " commit(s) on " + w.branch
               : std::string()) +
          "; `parallex workspace rm " + w.name + "` removes it");
    }
    events.emit("run_ended", ended);
  };
  return run_command(std::move(inputs), hooks);
}

}  // namespace px::cli::workspace_cmd
