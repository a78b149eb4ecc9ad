// GET /api/agents, POST /api/agents (`agent new`), GET /api/agents/{name}, POST /api/agents/{name}/grant,
// /ungrant, /allow, /disallow: `parallex agent list|show --json` and `agent
// set --grant|--ungrant|--allow|--disallow` (run/agent_view.hpp), with their
// checks and messages; /snapshot, /snapshots, /rewind: `agent snapshot|snapshots|rewind`
// (run/agent_snapshots.hpp).
#include "agents/names.hpp"
#include "run/agent_snapshots.hpp"
#include "run/agent_view.hpp"
#include "snapshot/snapshot_json.hpp"
#include "ui/api.hpp"

namespace px::ui {
namespace {

policy::Platform ui_platform() {
#ifdef __APPLE__
  return policy::Platform::macos;
#else
  return policy::Platform::linux_host;
#endif
}

std::string agent_field(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return "";
  if (!it->is_string()) throw std::invalid_argument(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

struct LoadedAgent {
  agents::AgentPaths paths;
  agents::AgentConfig config;
};

Result<LoadedAgent> load_agent(const std::string& name) {
  PX_TRY(agents::check_name(name));
  PX_TRY_ASSIGN(auto paths, agents::find_agent(agents::default_agents_root(), name));
  PX_TRY_ASSIGN(auto config, agents::load_config(paths));
  return LoadedAgent{std::move(paths), std::move(config)};
}

ApiAnswer api_agents(const ApiParams&, const nlohmann::json&) {
  std::vector<std::string> damaged;
  auto listed = run::list_agents_json(ui_platform(), damaged);
  if (!listed) return api_error(listed.error());
  return {200, listed.value()};
}

ApiAnswer api_agent(const ApiParams& p, const nlohmann::json&) {
  auto a = load_agent(p.at("name"));
  if (!a) return api_error(a.error());
  return {200, run::describe_agent(a.value().paths, a.value().config, true, ui_platform())};
}

// One change of the agent's rules, saved, answered with the agent as `show` prints it.
ApiAnswer api_agent_change(const ApiParams& p, const nlohmann::json& body, const std::string& what) {
  auto a = load_agent(p.at("name"));
  if (!a) return api_error(a.error());
  auto& c = a.value().config;
  std::vector<std::string> notes;
  Status changed = ok();
  if (what == "grant") {
    const std::string path = agent_field(body, "path"), mode = agent_field(body, "mode");
    if (path.empty())
      return api_error(Error::invalid("--grant: give {\"path\": \"/abs\", \"mode\": \"ro\"|\"rw\"}"));
    if (!mode.empty() && mode != "ro" && mode != "rw")
      return api_error(Error::invalid("--grant " + path + ":" + mode + ": the mode is ro or rw"));
    changed = run::grant_folder(c, mode.empty() ? path : path + ":" + mode, notes);
  } else if (what == "ungrant") {
    changed = run::ungrant_folder(c, agent_field(body, "path"));
  } else if (what == "allow") {
    changed = run::allow_host(c, agent_field(body, "host"));
  } else {
    changed = run::disallow_host(c, agent_field(body, "host"));
  }
  if (!changed) return api_error(changed.error());
  if (auto s = run::save_agent(a.value().paths, c); !s) return api_error(s.error());
  nlohmann::json j = run::describe_agent(a.value().paths, c, true, ui_platform());
  j["ok"] = true;
  if (!notes.empty()) j["notes"] = notes;
  return {200, j};
}

// `agent new NAME --email EMAIL [--decoys]`, with the same checks and messages;
// answered with the agent as `agent show --json` prints it. Its rules are the
// defaults (offline); the agent's page changes them as `agent set` does.
ApiAnswer api_agent_new(const ApiParams&, const nlohmann::json& body) {
  agents::AgentConfig c;
  c.name = agent_field(body, "name");
  c.email = agent_field(body, "email");
  if (const auto it = body.find("decoys"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return api_error(Error::invalid("\"decoys\" must be true or false"));
    c.decoys = it->get<bool>();
  }
  std::vector<std::string> said;
  auto made = run::make_agent(c, said);
  if (!made) return api_error(made.error());
  nlohmann::json j = run::describe_agent(made.value(), c, true, ui_platform());
  j["ok"] = true;
  if (!said.empty()) j["notes"] = said;
  return {201, j};
}

ApiAnswer api_snapshot(const ApiParams& p, const nlohmann::json&) {
  if (auto named = agents::check_name(p.at("name")); !named) return api_error(named.error());
  std::vector<std::string> said;
  auto taken = run::snapshot_agent_home(p.at("name"), {}, said);
  if (!taken) return api_error(taken.error());
  nlohmann::json j = snapshot::info_json(taken.value());
  j["ok"] = true;
  if (!said.empty()) j["notes"] = said;
  return {200, j};
}

ApiAnswer api_snapshots(const ApiParams& p, const nlohmann::json&) {
  if (auto named = agents::check_name(p.at("name")); !named) return api_error(named.error());
  auto list = run::agent_snapshots(p.at("name"));
  if (!list) return api_error(list.error());
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& i : list.value()) rows.push_back(snapshot::info_json(i));
  return {200, rows};
}

// A dry run unless the body says "dry_run": false (the page shows the dry run and asks first).
ApiAnswer api_rewind(const ApiParams& p, const nlohmann::json& body) {
  const std::string& name = p.at("name");
  if (auto named = agents::check_name(name); !named) return api_error(named.error());
  bool dry_run = true;
  if (const auto it = body.find("dry_run"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return api_error(Error::invalid("\"dry_run\" must be true or false"));
    dry_run = it->get<bool>();
  }
  auto done = run::rewind_agent_home(name, agent_field(body, "snapshot"), dry_run, {});
  if (!done) return api_error(done.error());
  nlohmann::json j = snapshot::rewind_json(done.value(), dry_run, run::agent_rewind_hint(name));
  j["ok"] = true;
  return {200, j};
}

}  // namespace

std::vector<ApiRoute> api_agents_routes() {
  std::vector<ApiRoute> routes{{"GET", "/api/agents", api_agents},
                               {"POST", "/api/agents", api_agent_new},
                               {"GET", "/api/agents/{name}", api_agent}};
  for (const char* what : {"grant", "ungrant", "allow", "disallow"})
    routes.push_back({"POST", std::string("/api/agents/{name}/") + what,
                      [w = std::string(what)](const ApiParams& p, const nlohmann::json& b) {
                        return api_agent_change(p, b, w);
                      }});
  routes.push_back({"POST", "/api/agents/{name}/snapshot", api_snapshot});
  routes.push_back({"GET", "/api/agents/{name}/snapshots", api_snapshots});
  routes.push_back({"POST", "/api/agents/{name}/rewind", api_rewind});
  return routes;
}

}  // namespace px::ui
