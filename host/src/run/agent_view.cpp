#include "run/agent_view.hpp"

#include <algorithm>
#include <filesystem>

#include "agents/git_config.hpp"
#include "agents/names.hpp"
#include "agents/run_inputs.hpp"
#include "agents/ssh_key.hpp"
#include "agents/token.hpp"
#include "common/paths.hpp"
#include "pluginhost/plugin_set.hpp"
#include "run/compose_request.hpp"
#include "supervisor/decoys.hpp"

namespace px::run {
namespace {

namespace fs = std::filesystem;

std::string agent_fingerprint(const agents::AgentPaths& p) {
  auto pub = agents::read_file(p.public_key());
  if (!pub) return "(missing: " + p.public_key().string() + ")";
  auto fp = agents::ssh_fingerprint(pub.value());
  return fp ? fp.value() : "(damaged: " + p.public_key().string() + ")";
}

}  // namespace

nlohmann::json describe_agent(const agents::AgentPaths& paths, const agents::AgentConfig& c, bool full,
                              policy::Platform platform) {
  nlohmann::json j;
  j["name"] = c.name;
  j["email"] = c.email;
  j["network"] = {
      {"mode", policy::to_string(c.network)}, {"allow", c.allow}, {"local_servers", c.local_servers}};
  if (c.local_servers && !c.local_server_ports.empty())
    j["network"]["local_server_ports"] = c.local_server_ports;
  if (c.ask_seconds > 0) j["network"]["ask_seconds"] = c.ask_seconds;
  if (c.processes) j["limits"] = {{"processes", *c.processes}};
  if (!c.env.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& e : c.env) names.push_back(e.substr(0, e.find('=')));
    j["env_passed"] = names;  // names only: a value may be a secret
  }
  auto token = agents::load_token(paths.gh());
  j["github_token"] = token ? (token.value() ? "present" : "none") : "unreadable";
  if (!full) return j;
  j["store"] = paths.root.string();
  j["home"] = paths.home().string();
  j["created"] = c.created;
  j["repos"] = c.repos;
  j["grants"] = nlohmann::json::array();
  for (const auto& g : c.grants)
    j["grants"].push_back(
        {{"path", g.path.string()}, {"access", g.access == policy::Access::write ? "rw" : "ro"}});
  j["key_fingerprint"] = agent_fingerprint(paths);
  j["gh_config_dir"] = paths.gh().string();
  j["git_config"] = paths.gitconfig().string();
  j["share_harness_config"] = c.share_harness_config;
  j["sealed"] = c.sealed;
  j["decoys"] = c.decoys;
  nlohmann::json dirs = nlohmann::json::object();
  auto set = pluginhost::PluginSet::load_default();
  for (const auto& plugin : set.plugins()) {
    auto contribution = plugin->contribute(platform, user_home(), paths.home(), paths.home(), nullptr);
    if (!contribution) continue;
    for (const auto& d : contribution.value().config_dirs)
      dirs[d.variable] = expand_home(d.path, paths.home()).string();
  }
  j["harness_config_dirs"] = dirs;
  if (c.share_harness_config) {
    j["shared_harness_files"] = nlohmann::json::array();
    std::error_code ec;
    for (const auto& f : agents::shared_harness_files(user_home()))
      if (fs::exists(f, ec)) j["shared_harness_files"].push_back(f.string());
  }
  return j;
}

Result<nlohmann::json> list_agents_json(policy::Platform platform, std::vector<std::string>& damaged) {
  PX_TRY_ASSIGN(auto names, agents::list_agents(agents::default_agents_root()));
  nlohmann::json all = nlohmann::json::array();
  for (const auto& n : names) {
    auto paths = agents::find_agent(agents::default_agents_root(), n);
    auto config = paths ? agents::load_config(paths.value()) : Result<agents::AgentConfig>(paths.error());
    if (!config) {
      damaged.push_back(config.error().message);
      all.push_back({{"name", n}, {"error", config.error().message}});
      continue;
    }
    all.push_back(describe_agent(paths.value(), config.value(), false, platform));
  }
  return all;
}

Status grant_folder(agents::AgentConfig& c, const std::string& spec, std::vector<std::string>& notes) {
  std::vector<Notice> grant_notes;
  PX_TRY_ASSIGN(auto flag, parse_grant(spec, grant_notes));
  for (auto& n : grant_notes) notes.push_back(std::move(n.text));
  bool replaced = false;
  for (auto& existing : c.grants)
    if (existing.path == flag.path) {
      existing.access = flag.access;
      replaced = true;
    }
  if (!replaced) c.grants.push_back({flag.path, flag.access});
  return ok();
}

Status ungrant_folder(agents::AgentConfig& c, const std::string& g) {
  const fs::path path = normal_absolute(expand_home(g, user_home()));
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(path, ec);
  auto before = c.grants.size();
  std::erase_if(c.grants, [&](const agents::Grant& x) { return x.path == path || x.path == real; });
  if (before == c.grants.size())
    return Error::invalid("--ungrant " + g + ": the agent has no grant for " + path.string() + ".");
  return ok();
}

Status allow_host(agents::AgentConfig& c, const std::string& h) {
  if (auto why = policy::check_host_pattern(h); !why.empty())
    return Error::invalid("--allow " + h + ": " + why);
  c.network = policy::NetworkMode::allowlist;
  if (std::find(c.allow.begin(), c.allow.end(), h) == c.allow.end()) c.allow.push_back(h);
  return ok();
}

Status disallow_host(agents::AgentConfig& c, const std::string& h) {
  auto it = std::find(c.allow.begin(), c.allow.end(), h);
  if (it == c.allow.end())
    return Error::invalid("--disallow " + h + ": the agent does not allow that host; `parallex agent show " +
                          c.name + "` lists them.");
  c.allow.erase(it);
  return ok();
}

Status save_agent(const agents::AgentPaths& paths, const agents::AgentConfig& c) {
  PX_TRY(agents::save_config(paths, c));
  return agents::write_git_identity(paths, c, parallex_executable());
}

Result<agents::AgentPaths> make_agent(const agents::AgentConfig& c, std::vector<std::string>& said) {
  PX_TRY(agents::check_name(c.name));
  PX_TRY(agents::check_email(c.email));
  PX_TRY_ASSIGN(auto paths, agents::create_agent(agents::default_agents_root(), c, parallex_executable()));
  if (c.share_harness_config) {
    PX_TRY_ASSIGN(auto linked, agents::link_shared_harness_config(paths, user_home()));
    said.insert(said.end(), linked.begin(), linked.end());
  }
  if (c.decoys) PX_TRY(plant_agent_decoys(paths, said));
  return paths;
}

Status plant_agent_decoys(const agents::AgentPaths& paths, std::vector<std::string>& said) {
  PX_TRY_ASSIGN(auto planted, supervisor::plant_decoys(paths.home()));
  for (const auto& f : supervisor::decoy_paths(paths.home()))
    said.push_back(
        "decoy credential " + f.string() +
        (std::find(planted.begin(), planted.end(), f) != planted.end() ? "" : " (already there, kept)"));
  said.push_back("any open of them during a run is flagged in the run record and at its end");
  return ok();
}

}  // namespace px::run
