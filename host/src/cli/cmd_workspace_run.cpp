// A workspaced run (`harness -w`, `agent -w`, `workspace agent`): checks every
// input, makes a fresh workspace, and runs the command sealed to it through
// the run stage (the workspace's git paths and variables as one more profile,
// its scoped GitHub token). Events for the tab host go out as it happens
// (schema: docs/workspaces.md).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "agents/store.hpp"
#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "cli/run_options.hpp"
#include "cli/workspace_cli.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "run/stage.hpp"
#include "workspace/config.hpp"
#include "workspace/events.hpp"
#include "workspace/github_token.hpp"
#include "workspace/project.hpp"
#include "workspace/sealed_git.hpp"
#include "workspace/workspace.hpp"

namespace px::cli::workspace_cmd {

namespace {

namespace ws = px::workspace;
using nlohmann::json;

// Inside the seal the run's temp dir is mounted at /tmp.
constexpr const char* kGhConfigInside = "/tmp/parallex-gh";

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

std::vector<std::string> workspaced_run_option_names() {
  return {"--name",   "--from",    "--events", "--harness",       "--profile",  "--grant",
          "--online", "--offline", "--allow",  "--local-servers", "--unsealed", "--allow-weaker-seal",
          "command"};
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

  run::RunInputs inputs;
  inputs.kind = run::RunKind::workspace;
  inputs.options = o.options;
  inputs.agent = o.agent;
  inputs.command = o.command;
  if (!config.value().sandbox_workspaces) {
    inputs.options.unsealed = true;
    inputs.unsealed_because = "sandbox_workspaces is false in " + p.config_file().string() + ":" +
                              std::to_string(config.value().sandbox_workspaces_line);
  }
  if (auto seal = run::check_seal(inputs.options); !seal) return fail(events, seal.error());
  // Said first, before anything is made: it is the first line of the tab's output.
  RunHooks hooks;
  if (inputs.options.unsealed) {
    const std::string unsealed = run::unsealed_notice(inputs.unsealed_because);
    say(unsealed);
    std::fflush(stderr);
    events.emit("notice", {{"message", unsealed}, {"kind", run::to_string(run::NoticeKind::unsealed)}});
    hooks.said_already.push_back(unsealed);
  }
  const bool sealed = !inputs.options.unsealed;
  // The network: the flags win; an agent keeps its own rules; else the
  // project's hosts, or online (through the run's proxy, logged).
  const run::RunOptions& given = o.options;
  if (!given.offline && !given.online && given.allow.empty() && o.agent.empty()) {
    if (config.value().has_allow)
      inputs.options.allow = config.value().allow;
    else
      inputs.options.online = true;
  }
  if (!given.profile && config.value().profile) inputs.options.profile = config.value().profile;
  if (auto checked = run::check_options(inputs.options); !checked) return fail(events, checked.error());

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
  auto abandon = [&](const Error& error) {
    if (!started) (void)ws::remove_workspace(p, w.name, true);
    return fail(events, error);
  };

  auto git_paths = ws::sealed_git_paths(p, w);
  if (!git_paths) return abandon(git_paths.error());

  std::map<std::string, std::string> env;
  env["PARALLEX_WORKSPACE"] = w.name;
  const char* path_env = std::getenv("PATH");
  if (const auto node = find_executable("node", path_env ? path_env : ""))
    env["PARALLEX_NODE"] = fs::absolute(*node).lexically_normal().string();
  if (o.agent.empty()) {
    // gh reads hosts.yml from its config dir on every call: an empty private
    // one, so it sees the scoped token or nothing (never the user's hosts.yml).
    env["GH_CONFIG_DIR"] = kGhConfigInside;
    if (!sealed) {
      // Unsealed, /tmp is the host's: a private dir of the workspace's own instead.
      const fs::path gh = parallex_runtime_dir() / "workspace-gh" / w.name;
      std::error_code ec;
      fs::create_directories(gh, ec);
      ::chmod(gh.c_str(), 0700);
      env["GH_CONFIG_DIR"] = gh.string();
    }
    env["GIT_TERMINAL_PROMPT"] = "0";  // without a token, push fails at once instead of asking
    if (token) {
      // The one variable of the strip list that comes back, brokered: the run
      // gets a placeholder of the token's shape in GH_TOKEN, and the proxy
      // swaps the token in on GitHub's hosts only.
      inputs.held_credentials.push_back({ws::brokered_github_token(p.token_file()), *token});
      // git push over HTTPS with that token alone (the helper reads the
      // variable; the token itself is not written in any config), and GitHub
      // SSH remotes turned to HTTPS, since ~/.ssh and SSH_AUTH_SOCK are gone.
      env["GIT_CONFIG_COUNT"] = "3";
      env["GIT_CONFIG_KEY_0"] = "credential.https://github.com.helper";
      env["GIT_CONFIG_VALUE_0"] =
          "!f() { test \"$1\" = get && echo username=x-access-token && echo \"password=$GH_TOKEN\"; }; f";
      env["GIT_CONFIG_KEY_1"] = "url.https://github.com/.insteadOf";
      env["GIT_CONFIG_VALUE_1"] = "git@github.com:";
      env["GIT_CONFIG_KEY_2"] = "url.https://github.com/.pushInsteadOf";
      env["GIT_CONFIG_VALUE_2"] = "ssh://git@github.com/";
    }
  }
  inputs.options.in = w.path.string();
  // Parallex's own variables (PARALLEX_*: only Parallex sets them) go to the
  // run as the front door's; the rest are rules of the workspace's profile.
  std::map<std::string, std::string> rules;
  for (const auto& [name, value] : env)
    (name.rfind("PARALLEX_", 0) == 0 ? inputs.extra_env : rules)[name] = value;
  inputs.extra_profiles.push_back(ws::workspace_profile(w, git_paths.value(), rules));
  inputs.cwd = w.path;
  inputs.record.workspace = run::WorkspaceRef{w.name, w.branch, w.base, w.base_commit, w.path, p.root};
  inputs.on_finish = [path = w.path](run::RunRecord& record) {
    if (auto changes = ws::workspace_changes(path)) record.changed_files = changes.value();
  };

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
    const auto node = env.find("PARALLEX_NODE");
    if (node != env.end() && sealed && !plan.policy.may_read(node->second))
      events.emit("notice", {{"message", "PARALLEX_NODE is " + node->second +
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
                 {"parallex_node", node != env.end() ? json(node->second) : json()}});
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
