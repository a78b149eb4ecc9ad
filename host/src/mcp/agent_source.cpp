#include "mcp/agent_source.hpp"

#include <algorithm>

#include "agents/names.hpp"
#include "agents/store.hpp"
#include "common/paths.hpp"

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

// The store's own rule (agents/names.hpp), so the MCP server never accepts a
// name `parallex agent` refuses (a separate pattern here once took capitals).
Status check_agent_name(const std::string& name) {
  if (auto checked = agents::check_name(name); !checked)
    return Error::invalid(checked.error().message + " list_workspaces lists the agents.");
  return px::ok();
}

Error unknown_agent(const std::string& name) {
  return Error::not_found("There is no agent named \"" + name + "\" (looked in " + agents_root().string() +
                          "). `parallex agent list` (or the MCP tool list_workspaces) lists the agents; "
                          "`parallex agent new` makes one.");
}

}  // namespace

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

}  // namespace px::mcp
