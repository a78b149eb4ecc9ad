#pragma once
// What the MCP tools read of the agent store, behind one small adapter: the
// agents library where it is built in, else agent.yaml read directly.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "mcp/jsonrpc.hpp"

namespace px::mcp {

namespace fs = std::filesystem;

struct AgentView {
  std::string name;
  std::string email;
  std::string network;  // offline | allowlist | online
  std::vector<std::string> allow;
  bool local_servers = false;
  bool sealed = true;
  std::vector<std::string> repos;
  std::vector<std::pair<std::string, std::string>> grants;  // path, "ro" | "rw"
  std::string created;
  fs::path root;

  fs::path home() const { return root / "home"; }
  fs::path snapshots() const { return root / "snapshots"; }
  fs::path runs() const;                                 // common/paths.hpp agent_runs_dir
  fs::path older_runs() const { return root / "runs"; }  // where an older Parallex kept them
  Json to_json() const;
};

// parallex_data_dir()/agents
fs::path agents_root();
Result<std::vector<std::string>> list_agent_names();
// An unknown name is a not_found error that says how to list the agents.
Result<AgentView> load_agent(const std::string& name);

}  // namespace px::mcp
