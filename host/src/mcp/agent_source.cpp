#include "mcp/agent_source.hpp"

#include <algorithm>
#include <regex>

#include "common/paths.hpp"

#ifdef PX_MCP_HAVE_AGENTS
#include "agents/store.hpp"
#else
#include <yaml-cpp/yaml.h>
#endif

namespace px::mcp {

Json AgentView::to_json() const {
  Json g = Json::array();
  for (const auto& [path, access] : grants) g.push_back({{"path", path}, {"access", access}});
  return Json{{"name", name},
              {"email", email},
              {"network", network},
              {"allowed_hosts", allow},
              {"local_servers", local_servers},
              {"sealed", sealed},
              {"repos", repos},
              {"grants", g},
              {"created", created},
              {"home", home().string()}};
}

fs::path AgentView::runs() const {
  return agent_runs_dir(root);
}

fs::path agents_root() {
  return parallex_data_dir() / "agents";
}

namespace {

Status check_agent_name(const std::string& name) {
  static const std::regex ok("^[a-z0-9][a-z0-9._-]{0,63}$", std::regex::icase);
  if (!std::regex_match(name, ok))
    return Error::invalid("\"" + name + "\" is not an agent name; list_workspaces lists the agents.");
  return px::ok();
}

Error unknown_agent(const std::string& name) {
  return Error::not_found("There is no agent named \"" + name + "\" (looked in " + agents_root().string() +
                          "). `parallex agent list` (or the MCP tool list_workspaces) lists the agents; "
                          "`parallex agent new` makes one.");
}

}  // namespace

#ifdef PX_MCP_HAVE_AGENTS

Result<std::vector<std::string>> list_agent_names() {
  return agents::list_agents(agents_root());
}

Result<AgentView> load_agent(const std::string& name) {
  PX_TRY(check_agent_name(name));
  auto paths = agents::find_agent(agents_root(), name);
  if (!paths) {
    if (paths.error().kind == ErrorKind::not_found) return unknown_agent(name);
    return paths.error();
  }
  PX_TRY_ASSIGN(auto c, agents::load_config(paths.value()));
  AgentView v;
  v.name = c.name;
  v.email = c.email;
  v.network = policy::to_string(c.network);
  v.allow = c.allow;
  v.local_servers = c.local_servers;
  v.sealed = c.sealed;
  v.repos = c.repos;
  for (const auto& g : c.grants)
    v.grants.emplace_back(g.path.string(), g.access == policy::Access::write ? "rw" : "ro");
  v.created = c.created;
  v.root = paths.value().root;
  return v;
}

#else  // the agents library is not built in: read agent.yaml directly

Result<std::vector<std::string>> list_agent_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(agents_root(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (check_agent_name(n) && it->is_directory(ec) && !it->is_symlink(ec)) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<AgentView> load_agent(const std::string& name) {
  PX_TRY(check_agent_name(name));
  AgentView v;
  v.root = agents_root() / name;
  std::error_code ec;
  if (!fs::is_directory(v.root, ec)) return unknown_agent(name);
  try {
    const YAML::Node root = YAML::LoadFile((v.root / "agent.yaml").string());
    v.name = root["name"].as<std::string>(name);
    v.email = root["email"].as<std::string>("");
    v.created = root["created"].as<std::string>("");
    if (root["repos"]) v.repos = root["repos"].as<std::vector<std::string>>();
    if (const YAML::Node net = root["network"]) {
      v.network = net["mode"].as<std::string>("offline");
      if (net["allow"]) v.allow = net["allow"].as<std::vector<std::string>>();
      v.local_servers = net["local_servers"].as<bool>(false);
    }
    if (const YAML::Node grants = root["grants"])
      for (const auto& g : grants)
        v.grants.emplace_back(g["path"].as<std::string>(""), g["access"].as<std::string>("ro"));
    v.sealed = root["sealed"].as<bool>(true);
  } catch (const std::exception& e) {
    return Error::invalid("The agent's rules file " + (v.root / "agent.yaml").string() +
                          " cannot be read: " + e.what() + ".");
  }
  return v;
}

#endif

}  // namespace px::mcp
