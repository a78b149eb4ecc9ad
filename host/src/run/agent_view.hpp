#pragma once
// An agent as `parallex agent list|show --json` print it and `parallex ui`
// serves it (/api/agents, /api/agents/{name}), and the changes of its rules
// both make (`agent set --grant|--ungrant|--allow|--disallow`, the page's
// Grant Folder and hosts): one function each, one set of checks and messages.
// Here rather than in agents/ because a grant is read as a run's --grant is
// (run/compose_request.hpp) and the harness folders come from the plugins.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/store.hpp"
#include "common/error.hpp"
#include "policy/policy.hpp"

namespace px::run {

// `full`: what `agent show` prints; else `agent list`'s row. The token is
// "present", "none" or "unreadable", never its value.
nlohmann::json describe_agent(const agents::AgentPaths& paths, const agents::AgentConfig& config, bool full,
                              policy::Platform platform);
// `agent list --json`: every agent, a damaged one as {name, error} (its
// message also in `damaged`).
Result<nlohmann::json> list_agents_json(policy::Platform platform, std::vector<std::string>& damaged);

// --grant SPEC (PATH, PATH:ro, PATH:rw): added, or its access replaced.
Status grant_folder(agents::AgentConfig& c, const std::string& spec, std::vector<std::string>& notes);
// --ungrant PATH: an error when the agent has no grant for it.
Status ungrant_folder(agents::AgentConfig& c, const std::string& path);
// --allow HOST (checked as every host rule is); the agent becomes an allowlist.
Status allow_host(agents::AgentConfig& c, const std::string& host);
// --disallow HOST: an error when the agent does not allow it.
Status disallow_host(agents::AgentConfig& c, const std::string& host);
// `agent new` (and the page's POST /api/agents): checks the name and email,
// makes the agent in the store with `c`'s rules, links the user's harness
// config when `c` shares it and plants its decoys when `c` has them. What
// the user should be told on the way goes to `said`.
Result<agents::AgentPaths> make_agent(const agents::AgentConfig& c, std::vector<std::string>& said);
// Plants the decoy credentials in the agent's home (`agent new|set --decoys on`); where, in `said`.
Status plant_agent_decoys(const agents::AgentPaths& paths, std::vector<std::string>& said);
// Writes a changed agent: agent.yaml and its git identity.
Status save_agent(const agents::AgentPaths& paths, const agents::AgentConfig& c);

}  // namespace px::run
