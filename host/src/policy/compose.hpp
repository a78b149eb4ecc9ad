#pragma once
// Composition: the inputs of a run (profiles, an agent, a plugin's
// contribution, flags) become one Policy. This is the only place that knows
// how the inputs combine; the result says, entry by entry, where each came from.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/contribution.hpp"
#include "policy/policy.hpp"
#include "policy/profile.hpp"

namespace px::policy {

enum class Platform { linux_host, macos };

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
  std::vector<std::string> publish;  // --publish PORT[:HOSTPORT]
};

struct AgentInputs {
  std::string name;
  fs::path home;  // becomes $HOME inside the run, read-write
  std::vector<fs::path> read_only;  // inside home: keys, token dir
  std::vector<PathFlag> grants;     // the agent's own grants
  std::optional<NetworkMode> network_mode;
  std::vector<std::string> allow;
  std::optional<bool> local_servers;
  // Variables set for the agent's runs (its git and gh config); names in
  // `secret_env` are shown redacted.
  std::map<std::string, std::string> env;
  std::set<std::string> secret_env;
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
  std::vector<PathFlag> grants;
  NetworkFlags network;
  // Variables set by a profile whose values are secret: shown redacted
  // wherever the policy is printed.
  std::set<std::string> secret_env;
  // Credentials parallex itself holds for the run (the agent's GitHub token, a
  // workspace's .parallex/github-token): brokered unless a profile or
  // agent.yaml turns them off or replaces them by name.
  std::vector<BrokeredCredential> default_credentials;
};

Result<Policy> compose(const ComposeInputs& inputs);

// Checks flag combinations before composing (e.g. --online with --offline).
Status check_network_flags(const NetworkFlags& flags);

}  // namespace px::policy
