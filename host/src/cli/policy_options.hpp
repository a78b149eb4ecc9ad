#pragma once
// The flags that shape a run's policy, shared by `policy show`, `run`, `detect`
// and the agent and workspace commands, and the one function that turns them
// (plus the command) into a composed Policy.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/error.hpp"
#include "pluginhost/detection.hpp"
#include "pluginhost/plugin_set.hpp"
#include "policy/compose.hpp"
#include "policy/policy.hpp"
#include "policy/profile.hpp"

namespace px::cli {

struct PolicyOptions {
  std::optional<std::string> harness;
  std::optional<std::string> profile;
  std::string in;
  std::vector<std::string> grants;  // PATH[:ro|:rw]
  bool online = false;
  bool offline = false;
  std::vector<std::string> allow;
  bool local_servers = false;
  std::vector<std::string> publish;  // PORT[:HOSTPORT]
  std::vector<std::string> command;  // after `--`
};

// Declares --harness, --profile, --in, --grant, --online, --offline, --allow,
// --local-servers, --publish; and, with `with_command`, the command after `--`.
void add_policy_options(CLI::App& app, PolicyOptions& options, bool with_command);

struct PreparedPolicy {
  std::shared_ptr<plugins::PluginSet> plugins;
  plugins::HarnessChoice harness;
  plugins::CommandLine command;
  policy::Policy policy;
  std::vector<std::string> notes;  // e.g. "granted /x (a symlink to /y)"
};

struct PrepareContext {
  policy::Platform platform = policy::Platform::linux_host;
  std::filesystem::path temp_dir;                 // the run's private temp dir
  std::optional<policy::AgentInputs> agent;       // agent runs
  std::shared_ptr<plugins::PluginSet> plugins;    // loaded once by the caller, or loaded here
  // Workspaced runs: profiles composed after --profile (the workspace's git
  // paths and variables), and names of variables they set that are secrets
  // (shown redacted in `policy show` and the run record).
  std::vector<policy::Profile> extra_profiles;
  std::set<std::string> secret_env;
};

Result<PreparedPolicy> prepare_policy(const PolicyOptions& options, PrepareContext context);

// "PATH[:ro|:rw]" -> PathFlag; the path must exist; a symlink is resolved and noted.
Result<policy::PathFlag> parse_grant(const std::string& text, std::vector<std::string>& notes);

}  // namespace px::cli
