#include "agents/run_inputs.hpp"

#include <algorithm>
#include <system_error>

#include "agents/credential.hpp"
#include "agents/token.hpp"
#include "common/read_file.hpp"
#include "policy/home_documents.hpp"
#include "snapshot/snapshot.hpp"

namespace px::agents {

std::map<std::string, std::string> agent_env(const AgentPaths& paths,
                                             const std::optional<std::string>& token) {
  std::map<std::string, std::string> env{
      {"GIT_CONFIG_GLOBAL", paths.gitconfig().string()},
      {"GIT_CONFIG_NOSYSTEM", "1"},
      // Git may not ask the terminal for a password: the user could type theirs.
      {"GIT_TERMINAL_PROMPT", "0"},
      {"GH_CONFIG_DIR", paths.gh().string()},
  };
  if (!token) env["GH_TOKEN"] = std::string(placeholder_token);
  return env;
}

policy::BrokeredCredential github_credential(const AgentPaths& paths, const AgentConfig& config) {
  policy::BrokeredCredential c;
  c.spec.name = "github";
  c.spec.source = broker::SecretSource::from_value(
      {}, "agent " + config.name + "'s token (" + paths.hosts_yml().string() + ")");
  c.spec.hosts = github_own_hosts();
  c.spec.env = {"GH_TOKEN"};
  // gh reads an Enterprise host's token from GH_ENTERPRISE_TOKEN: given only
  // when agent.yaml binds the token to such a host, so that gh never sends it
  // (unsealed, the token itself) to a host it was not meant for.
  const auto hosts = github_token_hosts(config);
  if (std::any_of(hosts.begin(), hosts.end(),
                  [](const std::string& h) { return is_github_enterprise_host(h); }))
    c.spec.env.push_back("GH_ENTERPRISE_TOKEN");
  c.spec.shape = "github-token";
  c.masked_files = {paths.hosts_yml()};
  c.reason =
      "the agent's own GitHub token: gh, git push over HTTPS and its credential helper use the placeholder";
  c.origin = policy::Origin::agent(config.name);
  return c;
}

std::vector<fs::path> shared_harness_files(const fs::path& user_home) {
  return {user_home / ".claude/CLAUDE.md", user_home / ".claude/skills", user_home / ".claude/plugins"};
}

policy::AgentInputs agent_inputs(const AgentPaths& paths, const AgentConfig& config,
                                 const std::optional<std::string>& token, const fs::path& user_home) {
  policy::AgentInputs in;
  in.name = config.name;
  in.home = paths.home();
  // keys/ and gh/ lie beside home/: readable for the run (it signs with the key
  // and uses the token), never writable. Its git config is its identity: read-only too.
  in.read_only = {paths.keys(), paths.gh(), paths.no_hooks(), paths.gitconfig()};
  for (const fs::path& p : {paths.keys(), paths.gh(), paths.no_hooks()})
    in.grants.push_back({p, policy::Access::read, "agent " + config.name});
  for (const auto& g : config.grants) in.grants.push_back({g.path, g.access, "agent " + config.name});
  if (config.share_harness_config) {
    std::error_code ec;
    for (const auto& f : shared_harness_files(user_home))
      if (fs::exists(f, ec))
        in.grants.push_back({f, policy::Access::read, "agent " + config.name + " (shared harness config)"});
  }
  in.network_mode = config.network;
  in.allow = config.allow;
  in.local_servers = config.local_servers;
  in.local_server_ports = config.local_server_ports;
  if (config.ask_seconds > 0) in.ask = std::chrono::seconds(config.ask_seconds);
  in.processes = config.processes;
  in.passed_env = config.env;
  in.env = agent_env(paths, token);
  in.broker = config.broker;
  return in;
}

Result<std::vector<std::string>> link_shared_harness_config(const AgentPaths& paths,
                                                            const fs::path& user_home) {
  std::vector<std::string> notes;
  const fs::path dir = paths.home() / ".claude";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error::io("create " + dir.string(), ec.value());
  for (const auto& from : shared_harness_files(user_home)) {
    if (!fs::exists(from, ec)) continue;
    const fs::path to = dir / from.filename();
    const auto st = fs::symlink_status(to, ec);
    if (fs::is_symlink(st)) {
      if (fs::read_symlink(to, ec) == from) continue;
      notes.push_back(to.string() + " is a link elsewhere; left as it is");
      continue;
    }
    if (fs::exists(st)) {
      notes.push_back(to.string() + " is the agent's own; left as it is (not shared)");
      continue;
    }
    fs::create_symlink(from, to, ec);
    if (ec) return Error::io("link " + to.string() + " to " + from.string(), ec.value());
  }
  return notes;
}

std::vector<std::string> command_running_settings(const fs::path& home,
                                                  const std::vector<policy::DeclaredHomeFiles>& declared) {
  std::vector<std::string> found;
  for (const auto& d : declared) {
    // Each of the agent's runs recorded its own folder ("projects.{run_folder}
    // ..." is data): `*`, any folder.
    for (const auto& f : policy::resolve_home_files(d, home, "*")) {
      // Scratch holds only what unsealed sessions wrote: every sealed run has its own there.
      if (!f.guarded() || f.kind == policy::HomeKind::scratch) continue;
      std::error_code ec;
      const auto st = fs::symlink_status(f.path, ec);
      if (ec || !fs::exists(st)) continue;
      if (fs::is_directory(st)) {
        // Something of its own that is not the harness's data, nor a file
        // declared on its own (checked above or below by its keys).
        const auto resolved = policy::resolve_home_files(d, home, "*");
        int seen = 0;
        for (fs::recursive_directory_iterator it(f.path, ec), end; !ec && it != end && ++seen < 10000;
             it.increment(ec)) {
          if (it->is_directory(ec)) continue;
          const policy::HomeFile* decl = policy::home_file_for(resolved, it->path());
          if (!decl || decl->path == it->path() || !decl->guarded() ||
              decl->kind == policy::HomeKind::scratch)
            continue;
          found.push_back(f.path.string() + " (" + f.reason + ")");
          break;
        }
        continue;
      }
      auto text = read_regular_file(f.path, {.max_bytes = 16u << 20, .follow_links = false});
      if (!text) {
        if (f.kind == policy::HomeKind::settings) found.push_back(f.path.string() + " (" + f.reason + ")");
        continue;
      }
      if (f.format == policy::HomeFormat::whole) {
        if (f.kind == policy::HomeKind::settings && !text.value().empty())
          found.push_back(f.path.string() + " (" + f.reason + ")");
        continue;
      }
      auto doc = policy::home::read_document(text.value(), f.format);
      if (!doc) {
        found.push_back(f.path.string() + " (" + f.reason + "; it is " + doc.error().message + ")");
        continue;
      }
      std::string keys;
      for (const auto& c : policy::home::diff_documents(nlohmann::json::object(), doc.value(), f))
        if (c.kind == policy::HomeKind::settings)
          keys += (keys.empty() ? "" : ", ") + policy::describe_key(c.key);
      if (!keys.empty()) found.push_back(f.path.string() + ": " + keys);
    }
  }
  return found;
}

Result<PreRunSnapshot> take_pre_run_snapshot(const AgentPaths& paths, const std::string& run_label) {
  PreRunSnapshot out;
  PX_TRY_ASSIGN(auto store, snapshot::Store::open(paths.snapshots(), true));
  snapshot::TakeOptions options;
  options.source = paths.home();
  options.label = run_label;
  options.kind = "run";
  PX_TRY_ASSIGN(auto info, store.take(options));
  out.taken = true;
  out.id = info.id;
  if (info.incomplete) out.note = "the snapshot " + info.id + " is incomplete: some files could not be read";
  return out;
}

}  // namespace px::agents
