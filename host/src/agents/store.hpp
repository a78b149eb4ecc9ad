#pragma once
// The agent store: one folder per agent under parallex_data_dir()/agents/.
//
//   agents/NAME/agent.yaml   its rules (network, grants); never reachable from a run
//   agents/NAME/home/        $HOME inside its runs (read-write there); its .gitconfig
//   agents/NAME/keys/        0700: id_ed25519 (OpenSSH), .pub, allowed_signers; read-only in runs
//   agents/NAME/gh/          0700: GH_CONFIG_DIR (hosts.yml 0600 with its token); read-only in runs
//   agents/NAME/no-hooks/    the empty core.hooksPath of its git
//   agents/NAME/snapshots/   snapshots of home/ (never keys/ or gh/)
//
// Its run records are state, not data: <state>/agents/NAME/runs
// (common/paths.hpp agent_runs_dir); agents/NAME/runs/ is where an older
// Parallex kept them, still read by reports.
//
// keys/ and gh/ sit beside home/, not in it, so a snapshot of home/ never holds
// the key or the token and a rewind never touches them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/paths.hpp"
#include "policy/broker_sections.hpp"
#include "policy/policy.hpp"

namespace px::agents {

namespace fs = std::filesystem;

struct Grant {
  fs::path path;
  policy::Access access = policy::Access::read;
};

struct AgentConfig {
  std::string name;
  std::string email;
  std::vector<std::string> repos;  // OWNER/REPO, for the token page
  policy::NetworkMode network = policy::NetworkMode::offline;
  std::vector<std::string> allow;                 // hosts, when network is allowlist
  bool local_servers = false;                     // off unless the user turns it on
  std::vector<std::uint16_t> local_server_ports;  // with local_servers: only these; empty: every port
  // Ask mode (`network.ask`, policy/ask.hpp): seconds a connection outside
  // its rule waits for the user's answer; 0: off.
  std::uint32_t ask_seconds = 0;
  std::vector<Grant> grants;
  // `limits: {processes: N}`: the most processes its runs may have at once
  // (policy.hpp: ProcessLimit); unset: the profiles' (4096 by default).
  std::optional<std::uint64_t> processes;
  // Variables passed on purpose: NAME (from the caller's environment) or
  // NAME=VALUE, as `--env` on a run command.
  std::vector<std::string> env;
  bool share_harness_config = false;
  bool decoys = false;  // decoy credentials planted in its home, watched during runs
  bool sealed = true;
  std::string created;  // UTC, ISO 8601
  // Its credentials and request rules (`credentials:` and `requests:`, written
  // by hand; policy/broker_yaml.hpp), read when the file is, and their YAML
  // kept as written so that `agent set` rewrites the file without losing them.
  policy::BrokerSections broker;
  std::string broker_yaml;
};

struct AgentPaths {
  fs::path root;
  fs::path config() const { return root / "agent.yaml"; }
  fs::path home() const { return root / "home"; }
  fs::path keys() const { return root / "keys"; }
  fs::path gh() const { return root / "gh"; }
  fs::path no_hooks() const { return root / "no-hooks"; }
  fs::path snapshots() const { return root / "snapshots"; }
  fs::path runs() const { return agent_runs_dir(root); }
  fs::path older_runs() const { return root / "runs"; }
  fs::path private_key() const { return keys() / "id_ed25519"; }
  fs::path public_key() const { return keys() / "id_ed25519.pub"; }
  fs::path allowed_signers() const { return keys() / "allowed_signers"; }
  fs::path gitconfig() const { return home() / ".gitconfig"; }
  // The SSH servers its git has met (first use trusted; in its home, since its
  // ~/.ssh stays hidden like the user's).
  fs::path known_hosts() const { return home() / ".config/parallex/ssh_known_hosts"; }
  fs::path hosts_yml() const { return gh() / "hosts.yml"; }
};

// parallex_data_dir()/agents
fs::path default_agents_root();
AgentPaths paths_of(const fs::path& agents_root, const std::string& name);

// Builds the whole agent in a temporary folder beside its final place, then
// renames it into place without replacing anything: of two concurrent
// creations of one name, one wins and the other fails with `conflict`.
// `parallex_exe` is written into its git credential helper.
Result<AgentPaths> create_agent(const fs::path& agents_root, const AgentConfig& config,
                                const fs::path& parallex_exe);

// An existing agent's folder; an unknown or invalid name is an error.
Result<AgentPaths> find_agent(const fs::path& agents_root, const std::string& name);

// Reads agent.yaml; a missing or corrupt file is an error naming it.
Result<AgentConfig> load_config(const AgentPaths& paths);
// Replaces agent.yaml atomically (temp file, fsync, rename).
Status save_config(const AgentPaths& paths, const AgentConfig& config);
std::string config_to_yaml(const AgentConfig& config);

// Checks what every command relies on: agent.yaml, home/, the key pair.
Status check_layout(const AgentPaths& paths);

// Names of the agents in the store, sorted. Leftovers of interrupted
// creations are skipped.
Result<std::vector<std::string>> list_agents(const fs::path& agents_root);

// Removes the agent for good: key, token, sign-ins, snapshots, run records.
// The folder is first renamed aside, so a half-removed agent is never listed.
Status delete_agent(const AgentPaths& paths);

// Writes `data` to `file` (mode `mode`) through a temp file and rename; never
// follows a symlink at `file`.
Status write_file_atomic(const fs::path& file, const std::string& data, unsigned mode);
// Reads a whole regular file; errors name it.
Result<std::string> read_file(const fs::path& file);

}  // namespace px::agents
