// The agent tools: list_workspaces, whoami, snapshot_agent, list_snapshots,
// read_report, rewind_agent.
#include <pwd.h>
#include <unistd.h>

#include <ctime>

#include "common/clock.hpp"
#include "common/paths.hpp"
#include "killswitch/registry.hpp"
#include "mcp/agent_source.hpp"
#include "mcp/tools.hpp"
#include "pluginhost/plugin_set.hpp"
#include "report/report.hpp"
#include "snapshot/snapshot.hpp"
#include "workspace/config.hpp"
#include "workspace/project.hpp"
#include "workspace/workspace.hpp"

namespace px::mcp {
namespace {

Json str() {
  return Json{{"type", "string"}};
}
Json boolean() {
  return Json{{"type", "boolean"}};
}
Json integer() {
  return Json{{"type", "integer"}};
}
Json array_of(Json items) {
  return Json{{"type", "array"}, {"items", std::move(items)}};
}
Json open_object() {
  return Json{{"type", "object"}};
}

std::string iso_utc(std::int64_t ns) {
  return iso_utc_seconds(static_cast<std::time_t>(ns / 1000000000));
}

// Loads the agent a tool names, after the in-run scope check.
Result<AgentView> agent_for(const ToolContext& ctx, const Json& args) {
  const std::string name = args.at("agent").get<std::string>();
  if (auto why = outside_scope(ctx.run(), name)) return Error::policy(*why);
  return load_agent(name);
}

bool agent_running(const std::string& name) {
  return killswitch::agent_has_live_run(parallex_runtime_dir(), name);
}

// ---- list_workspaces

Json agent_entry_schema() {
  return Json{{"type", "object"},
              {"properties",
               {{"name", str()},
                {"network", str()},
                {"allowed_hosts", array_of(str())},
                {"sealed", boolean()},
                {"source", str()}}},
              {"required", {"name", "network", "allowed_hosts"}}};
}

ToolResult list_workspaces(ToolContext& ctx, const Json& args) {
  const RunIdentity& run = ctx.run();
  Json out{{"inside_run", run.inside_run}, {"agents", Json::array()}, {"notes", Json::array()}};
  Json project = nullptr;
  Json workspaces = Json::array();
  if (run.inside_run) {
    if (run.agent.empty()) {
      out["notes"].push_back("Inside an ad-hoc run: no agent is listed from here.");
    } else if (auto a = load_agent(run.agent)) {
      Json j = a.value().to_json();
      j["source"] = "agent.yaml";
      out["agents"].push_back(j);
    } else {
      // The store is hidden from a sealed run; the run's own rule is known from its environment.
      out["agents"].push_back(Json{{"name", run.agent},
                                   {"network", run.network},
                                   {"allowed_hosts", run.allowed_hosts},
                                   {"sealed", run.seal.claimed},
                                   {"source", "run environment"}});
    }
    out["notes"].push_back("Inside a run this server answers only about " +
                           (run.agent.empty() ? std::string("its own run") : "agent " + run.agent) + ".");
  } else {
    auto names = list_agent_names();
    if (!names) return tool_error(names.error());
    for (const auto& n : names.value()) {
      auto a = load_agent(n);
      if (!a) {
        out["notes"].push_back(a.error().message);
        continue;
      }
      Json j = a.value().to_json();
      j["source"] = "agent.yaml";
      j["running"] = agent_running(n);
      out["agents"].push_back(j);
    }
    std::error_code ec;
    const fs::path start =
        args.contains("project") ? fs::path(args["project"].get<std::string>()) : fs::current_path(ec);
    if (auto p = workspace::find_project(start)) {
      // A config that cannot be read is said in the notes; the rules shown
      // are then the defaults, decided where every workspaced run's are.
      auto c = workspace::load_project_config(p.value().config_file());
      if (!c) out["notes"].push_back(c.error().message);
      const workspace::ProjectConfig config = c ? c.value() : workspace::ProjectConfig{};
      Json rules{{"sandbox_workspaces", config.sandbox_workspaces},
                 {"network", policy::to_string(workspace::project_network(config))},
                 {"allowed_hosts", config.allow}};
      if (config.profile) rules["profile"] = *config.profile;
      project = Json{{"root", p.value().root.string()}, {"rules", rules}};
      if (auto list = workspace::list_workspaces(p.value())) {
        for (const auto& w : list.value()) workspaces.push_back(w.to_json());
      } else {
        out["notes"].push_back(list.error().message);
      }
    } else if (args.contains("project")) {
      return tool_error(p.error());
    } else {
      out["notes"].push_back("The server's folder (" + start.string() +
                             ") is in no git repository, so no workspaces are listed; pass \"project\".");
    }
  }
  out["project"] = project;
  out["workspaces"] = workspaces;
  ToolResult r;
  r.structured = out;
  return r;
}

// ---- whoami

ToolResult whoami(ToolContext& ctx, const Json&) {
  const RunIdentity& run = ctx.run();
  Json user{{"uid", static_cast<std::int64_t>(::getuid())}, {"home", user_home().string()}, {"name", ""}};
  if (const passwd* pw = ::getpwuid(::getuid())) user["name"] = pw->pw_name;
  std::string as;
  if (!run.inside_run) {
    as = "the user " + user["name"].get<std::string>() + ", outside any Parallex run";
  } else {
    as = (run.agent.empty() ? "an ad-hoc Parallex run " : "agent " + run.agent + " in run ") + run.run_id +
         ", network " + run.network;
    if (run.network == "allowlist") {
      std::string hosts;
      for (const auto& h : run.allowed_hosts) hosts += (hosts.empty() ? "" : ", ") + h;
      as += " (" + (hosts.empty() ? std::string("no host") : hosts) + ")";
    }
    if (run.seal.verified())
      as += ", sealed";
    else if (run.seal.claimed)
      as += ", claimed sealed but the process has no seccomp filter: treat it as unsealed";
    else
      as += ", unsealed";
  }
  ToolResult r;
  r.structured =
      Json{{"running_as", as}, {"inside_run", run.inside_run}, {"user", user}, {"run", to_json(run)}};
  r.message = "Running as " + as + ".";
  return r;
}

// ---- snapshots

Json snapshot_json(const snapshot::SnapshotInfo& s) {
  return Json{{"id", s.id},
              {"time", iso_utc(s.time_ns)},
              {"label", s.label},
              {"kind", s.kind},
              {"files", s.files},
              {"bytes", s.bytes},
              {"new_bytes", s.new_bytes},
              {"incomplete", s.incomplete},
              {"warnings", s.warnings}};
}

Json snapshot_schema() {
  return Json{{"type", "object"},
              {"properties",
               {{"id", str()},
                {"time", str()},
                {"label", str()},
                {"kind", str()},
                {"files", integer()},
                {"bytes", integer()},
                {"incomplete", boolean()}}},
              {"required", {"id", "time", "kind"}}};
}

ToolResult snapshot_agent(ToolContext& ctx, const Json& args) {
  auto agent = agent_for(ctx, args);
  if (!agent) return tool_error(agent.error());
  auto store = snapshot::Store::open(agent.value().snapshots(), true);
  if (!store) return tool_error(store.error());
  snapshot::TakeOptions o;
  o.source = agent.value().home();
  o.label = args.value("label", std::string("taken through MCP"));
  o.kind = "manual";
  auto info = store.value().take(o);
  if (!info) return tool_error(info.error());
  ToolResult r;
  r.structured = Json{{"agent", agent.value().name}, {"snapshot", snapshot_json(info.value())}};
  r.message = "Took snapshot " + info.value().id + " of agent " + agent.value().name + "'s home.";
  return r;
}

ToolResult list_snapshots(ToolContext& ctx, const Json& args) {
  auto agent = agent_for(ctx, args);
  if (!agent) return tool_error(agent.error());
  Json list = Json::array();
  std::error_code ec;
  if (fs::exists(agent.value().snapshots(), ec)) {
    // An agent's store folder is made with it; its layout comes with the first snapshot.
    auto store = snapshot::Store::open(agent.value().snapshots(), true);
    if (!store) return tool_error(store.error());
    auto all = store.value().list();
    if (!all) return tool_error(all.error());
    for (const auto& s : all.value()) list.push_back(snapshot_json(s));
  }
  ToolResult r;
  r.structured = Json{{"agent", agent.value().name}, {"snapshots", list}};
  return r;
}

// ---- read_report

ToolResult read_report(ToolContext& ctx, const Json& args) {
  auto agent = agent_for(ctx, args);
  if (!agent) return tool_error(agent.error());
  report::ReportRequest req = report::agent_request(agent.value().name, agent.value().root);
  if (args.contains("run_id"))
    req.selection.run_id = args["run_id"].get<std::string>();
  else
    req.selection.last = !args.value("all", false);
  const auto plugins = pluginhost::PluginSet::load_default();
  req.plugins = &plugins;
  report::Json rep = report::build_report(req);
  report::redact_strings(rep);
  // As the CLI's exit 3: a run asked for by id and not found is an error the
  // model must see as one, not an empty list. (An agent with no run yet is
  // an answer: no runs, and the problem says so.)
  if (req.selection.run_id && rep["runs"].empty() && !rep["problems"].empty()) {
    std::string why;
    for (const auto& p : rep["problems"]) why += (why.empty() ? "" : " ") + p.get<std::string>();
    return tool_error(why + " read_report without run_id reads the agent's last run.");
  }
  ToolResult r;
  r.structured = Json::parse(rep.dump());
  return r;
}

// ---- rewind_agent

// The rewind takes the transcripts of the runs after the snapshot out of the
// home, where their reports read them: each run's report keeps a copy first.
Status keep_reports(const AgentView& agent) {
  const auto plugins = pluginhost::PluginSet::load_default();
  report::ReportRequest req = report::agent_request(agent.name, agent.root);
  req.plugins = &plugins;
  auto kept = report::keep_sessions(req);
  if (!kept)
    return Error{kept.error().kind, "the transcripts its past runs' reports read could not be kept (" +
                                        kept.error().message + "), and the rewind would take them away"};
  return ok();
}

ToolResult rewind_agent(ToolContext& ctx, const Json& args) {
  const std::string name = args.at("agent").get<std::string>();
  const std::string terminal = "Run `parallex agent rewind " + name + "` in a terminal instead.";
  if (ctx.run().inside_run) {
    if (auto why = outside_scope(ctx.run(), name)) return tool_error(*why);
    return tool_error("Agent " + name + " is running (this server runs inside its run " + ctx.run().run_id +
                      "), and a rewind is refused while the agent runs. Run `parallex agent rewind " + name +
                      "` in a terminal once the run has ended.");
  }
  auto agent = load_agent(name);
  if (!agent) return tool_error(agent.error());
  std::error_code ec;
  if (!fs::exists(agent.value().snapshots(), ec))
    return tool_error("Agent " + name + " has no snapshots yet, so there is nothing to rewind to.");
  auto store = snapshot::Store::open(agent.value().snapshots(), true);
  if (!store) return tool_error(store.error());
  if (auto existing = store.value().list(); existing && existing.value().empty())
    return tool_error("Agent " + name + " has no snapshots yet, so there is nothing to rewind to.");
  snapshot::RewindOptions o;
  o.source = agent.value().home();
  if (args.contains("to")) o.to = args["to"].get<std::string>();
  o.is_busy = [name] { return agent_running(name); };
  o.dry_run = true;
  // A snapshot id the store does not know: said in the model's terms (the
  // tool that lists them), not the CLI's.
  if (o.to) {
    if (auto known = store.value().find(*o.to); !known)
      return tool_error(known.error().kind == ErrorKind::not_found
                            ? "Agent " + name + " has no snapshot \"" + *o.to +
                                  "\"; the list_snapshots tool shows its snapshots' ids."
                            : "Agent " + name + ": " + known.error().message +
                                  " The list_snapshots tool shows its snapshots' ids.");
  }
  auto plan = store.value().rewind(o);
  if (!plan) return tool_error(plan.error());
  auto target = store.value().find(plan.value().target_id);
  if (!target) return tool_error(target.error());
  const std::size_t changes = plan.value().changes.size();

  if (!ctx.client.supports_elicitation())
    return tool_error("Rewinding agent " + name +
                      " needs your confirmation, and this MCP client cannot ask for it "
                      "(it does not support elicitation), so nothing was rewound. " +
                      terminal);

  const std::string question =
      "Rewind agent " + name + "'s home to snapshot " + target.value().id + " (" +
      iso_utc(target.value().time_ns) + (target.value().label.empty() ? "" : ", " + target.value().label) +
      ")? " + std::to_string(changes) +
      " entries would change. Its state now is kept as a snapshot first, so this can be undone.";
  Json schema{{"type", "object"},
              {"properties",
               {{"confirm",
                 {{"type", "boolean"},
                  {"title", "Rewind " + name},
                  {"description", "Put the agent's home back as it was in that snapshot"},
                  {"default", false}}}}},
              {"required", {"confirm"}}};
  auto answer =
      ctx.client.request("elicitation/create", Json{{"message", question}, {"requestedSchema", schema}});
  Json out{{"agent", name}, {"rewound", false}, {"target", target.value().id}, {"changes", changes}};
  if (!answer) return tool_error("Agent " + name + " was not rewound: " + answer.error().message);
  const std::string action = answer.value().is_object() ? answer.value().value("action", std::string()) : "";
  out["answer"] = action.empty() ? "none" : action;
  // Only an explicit `confirm: true` is a yes: an accept whose content lacks
  // the field (or holds anything else) rewinds nothing.
  bool confirmed = false;
  if (action == "accept" && answer.value().contains("content") && answer.value()["content"].is_object()) {
    const Json& content = answer.value()["content"];
    const auto it = content.find("confirm");
    confirmed = it != content.end() && it->is_boolean() && it->get<bool>();
  }
  ToolResult r;
  if (!confirmed) {
    out["undo_snapshot"] = "";
    r.structured = out;
    r.message = "Agent " + name + " was not rewound: the user " +
                (action == "accept"    ? std::string("did not confirm")
                 : action == "decline" ? "declined"
                                       : "cancelled") +
                ".";
    return r;
  }
  o.dry_run = false;
  o.to = target.value().id;
  if (auto kept = keep_reports(agent.value()); !kept)
    return tool_error("Agent " + name + " was not rewound: " + kept.error().message);
  auto done = store.value().rewind(o);
  if (!done) return tool_error(done.error());
  out["rewound"] = true;
  out["undo_snapshot"] = done.value().undo_id;
  out["files_written"] = done.value().files_written;
  out["entries_removed"] = done.value().entries_removed;
  out["warnings"] = done.value().warnings;
  r.structured = out;
  r.message =
      "Rewound agent " + name + " to snapshot " + target.value().id + "." +
      (done.value().undo_id.empty() ? "" : " Undo with rewind_agent to=" + done.value().undo_id + ".");
  return r;
}

}  // namespace

void add_agent_tools(std::vector<Tool>& tools) {
  tools.push_back(Tool{"list_workspaces", "List agents and workspaces",
                       "Lists Parallex's agents with their rules (network mode, allowed hosts, seal, grants) "
                       "and the disposable "
                       "workspaces of the project (a git repository: \"project\", else the server's folder) "
                       "with its rules. Inside "
                       "an agent's run, only that agent.",
                       object_schema({{"project",
                                       {{"type", "string"},
                                        {"description",
                                         "A folder of the project; default: the "
                                         "server's current folder."}}}}),
                       object_schema({{"inside_run", boolean()},
                                      {"agents", array_of(agent_entry_schema())},
                                      {"project", {{"type", {"object", "null"}}}},
                                      {"workspaces", array_of(open_object())},
                                      {"notes", array_of(str())}},
                                     {"inside_run", "agents", "workspaces", "notes"}, false),
                       true, false, false, list_workspaces});
  tools.push_back(Tool{
      "whoami", "Who am I running as",
      "Says who this MCP server runs as: outside a Parallex run, the user; inside one, the agent, the run "
      "id, its "
      "network rule and whether the seal is verified (no_new_privs and a seccomp filter).",
      object_schema(Json::object()),
      object_schema(
          {{"running_as", str()}, {"inside_run", boolean()}, {"user", open_object()}, {"run", open_object()}},
          {"running_as", "inside_run", "user", "run"}, false),
      true, false, false, whoami});
  tools.push_back(Tool{
      "snapshot_agent", "Snapshot an agent",
      "Takes a snapshot of the agent's home (its git and gh settings, sign-ins, harness config and "
      "history; never its signing key or token).",
      object_schema({{"agent", agent_name_schema()}, {"label", {{"type", "string"}, {"maxLength", 200}}}},
                    {"agent"}),
      object_schema({{"agent", str()}, {"snapshot", snapshot_schema()}}, {"agent", "snapshot"}, false), false,
      false, false, snapshot_agent});
  tools.push_back(Tool{"list_snapshots", "List an agent's snapshots",
                       "Lists the snapshots of the agent's home, oldest first.",
                       object_schema({{"agent", agent_name_schema()}}, {"agent"}),
                       object_schema({{"agent", str()}, {"snapshots", array_of(snapshot_schema())}},
                                     {"agent", "snapshots"}, false),
                       true, false, false, list_snapshots});
  tools.push_back(
      Tool{"read_report", "Read an agent's report",
           "What the agent did in a run (its last by default): files read and changed, commands, hosts "
           "reached, git "
           "commits, and the sources used. Secrets are redacted.",
           object_schema({{"agent", agent_name_schema()},
                          {"run_id", {{"type", "string"}, {"minLength", 1}, {"maxLength", 128}}},
                          {"all", {{"type", "boolean"}, {"description", "Every run, not only the last."}}}},
                         {"agent"}),
           object_schema({{"schema", str()},
                          {"agent", str()},
                          {"runs", array_of(open_object())},
                          {"problems", array_of(str())}},
                         {"schema", "agent", "runs", "problems"}, false),
           true, false, false, read_report});
  tools.push_back(Tool{
      "rewind_agent", "Rewind an agent",
      "Puts the agent's home back as it was in a snapshot (the newest by default), after asking the user to "
      "confirm. The state it replaces is kept as a snapshot. Clients without elicitation are told to use "
      "`parallex agent rewind NAME` in a terminal.",
      object_schema({{"agent", agent_name_schema()},
                     {"to",
                      {{"type", "string"},
                       {"minLength", 1},
                       {"maxLength", 128},
                       {"description", "Snapshot id or unique prefix."}}}},
                    {"agent"}),
      object_schema({{"agent", str()},
                     {"rewound", boolean()},
                     {"answer", str()},
                     {"target", str()},
                     {"changes", integer()},
                     {"undo_snapshot", str()}},
                    {"agent", "rewound", "answer"}, false),
      false, true, false, rewind_agent});
}

}  // namespace px::mcp
