#pragma once
// Composition: the inputs of a run (profiles, an agent, a plugin's
// contribution, flags) become one Policy. This is the only place that knows
// how the inputs combine; the result says, entry by entry, where each came from.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/contribution.hpp"
#include "policy/own_state.hpp"
#include "policy/policy.hpp"
#include "policy/profile.hpp"

namespace px::policy {

class PolicyBuilder;

struct PathFlag {
  fs::path path;
  Access access = Access::read;
  std::string flag = "--grant";
};

struct NetworkFlags {
  bool online = false;
  bool offline = false;
  std::vector<std::string> allow;
  std::optional<bool> local_servers;
  std::vector<std::uint16_t> local_server_ports;  // with local_servers: only these (empty: every port)
  std::vector<std::string> publish;               // --publish PORT[:HOSTPORT]
  std::optional<std::chrono::seconds> ask;        // --ask[=SECONDS|off]
};

struct AgentInputs {
  std::string name;
  fs::path home;                    // becomes $HOME inside the run, read-write
  std::vector<fs::path> read_only;  // inside home: keys, token dir
  std::vector<PathFlag> grants;     // the agent's own grants
  std::optional<NetworkMode> network_mode;
  std::vector<std::string> allow;
  std::optional<bool> local_servers;
  std::vector<std::uint16_t> local_server_ports;
  std::optional<std::chrono::seconds> ask;  // agent.yaml's network.ask
  std::optional<std::uint64_t> processes;   // agent.yaml's limits.processes
  // Variables set for the agent's runs (its git and gh config); names in
  // `secret_env` are shown redacted.
  std::map<std::string, std::string> env;
  std::set<std::string> secret_env;
  // agent.yaml's `env`: NAME (passed from the caller) or NAME=VALUE, as --env.
  std::vector<std::string> passed_env;
  // Its own credentials and request rules (agent.yaml's broker sections).
  BrokerSections broker;
};

struct ComposeInputs {
  Platform platform = Platform::linux_host;
  fs::path user_home;
  fs::path run_folder;
  fs::path temp_dir;
  std::vector<Profile> profiles;  // the default profile first, then --profile
  std::optional<AgentInputs> agent;
  std::optional<HarnessContribution> harness;
  // The harness's files in a home, as its plugin declares them (ABI 1.4): in
  // a run under the user's own home the seal shows the run its own writes
  // to them, data lands and changed settings are held back.
  std::optional<DeclaredHomeFiles> harness_home_files;
  std::vector<PathFlag> grants;
  // The parallex executable, readable in every run: its MCP server (`parallex
  // mcp`, which a harness inside starts) and an agent's git credential helper
  // run inside. Empty: not granted (compositions for tests).
  fs::path parallex_executable;
  // The run's opener (run/opener_protocol.hpp): the folder with the socket
  // a page the run asks to open is handed over on, readable in the run.
  // Empty: none.
  fs::path opener_dir;
  NetworkFlags network;
  // Variables set by a profile whose values are secret: shown redacted
  // wherever the policy is printed.
  std::set<std::string> secret_env;
  // What every loaded plugin says its harness runs or trusts in a project.
  // A file refused there (`.git`, a path a profile keeps) is the run's
  // error when its plugin is the harness's; another plugin's is left out,
  // said in `notes`.
  std::vector<ProjectFiles> project_files;
  // --env NAME (passed from the caller) or NAME=VALUE (set), on purpose.
  std::vector<std::string> env_flags;
  // The run folder's existing git files that can make git run a program
  // (run/git_paths.hpp): read-only, like .git/config and .git/hooks.
  std::vector<fs::path> git_files;
  // --dangerously-writable PATH: read-only paths the run may write after all.
  std::vector<fs::path> dangerously_writable;
  // Parallex's own state, denied to the run (policy/own_state.hpp); unset in
  // compositions that only show a policy for a folder.
  std::optional<OwnState> own_state;
  // Credentials parallex itself holds for the run (the agent's GitHub token, a
  // workspace's .parallex/github-token): brokered unless a profile or
  // agent.yaml turns them off or replaces them by name.
  std::vector<BrokeredCredential> default_credentials;
};

// "NAME" or "NAME=VALUE" (--env): an error names a bad name.
Status apply_env_flag(PolicyBuilder& builder, const std::string& spec, const Origin& origin);

// `notes`, when given, receives what was left out of the policy and why (a
// refused project file of a plugin that is not the run's harness).
Result<Policy> compose(const ComposeInputs& inputs, std::vector<std::string>* notes = nullptr);

// Checks flag combinations before composing (e.g. --online with --offline).
Status check_network_flags(const NetworkFlags& flags);

}  // namespace px::policy
