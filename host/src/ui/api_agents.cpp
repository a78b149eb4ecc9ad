// GET /api/agents, GET /api/agents/{name}, POST /api/agents/{name}/grant,
// /ungrant, /allow, /disallow: `parallex agent list|show --json` and `agent
// set --grant|--ungrant|--allow|--disallow` (run/agent_view.hpp), with their
// checks and messages.
#include "agents/names.hpp"
#include "run/agent_view.hpp"
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

}  // namespace

std::vector<ApiRoute> api_agents_routes() {
  std::vector<ApiRoute> routes{{"GET", "/api/agents", api_agents}, {"GET", "/api/agents/{name}", api_agent}};
  for (const char* what : {"grant", "ungrant", "allow", "disallow"})
    routes.push_back({"POST", std::string("/api/agents/{name}/") + what,
                      [w = std::string(what)](const ApiParams& p, const nlohmann::json& b) {
                        return api_agent_change(p, b, w);
                      }});
  return routes;
}

}  // namespace px::ui
