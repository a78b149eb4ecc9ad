#pragma once
// What an agent run takes from the agent: the policy inputs (its home, its
// rules, the read-only keys and gh config, the variables that point git and gh
// at its own identity) and the snapshot taken before it starts.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agents/store.hpp"
#include "common/error.hpp"
#include "policy/compose.hpp"
#include "policy/home_files.hpp"

namespace px::agents {

// The environment of the agent's runs (no user credential: SSH_AUTH_SOCK,
// GH_TOKEN and the rest are stripped by the default profile, then these are set):
//   GIT_CONFIG_GLOBAL=home/.gitconfig  GIT_CONFIG_NOSYSTEM=1  GIT_TERMINAL_PROMPT=0
//   GH_CONFIG_DIR=gh/  GH_TOKEN=<without a token: a placeholder GitHub refuses>
// With a token, GH_TOKEN is the brokered credential's (github_credential):
// the run gets a placeholder of its shape, never the token.
std::map<std::string, std::string> agent_env(const AgentPaths& paths,
                                             const std::optional<std::string>& token);

// The agent's GitHub token as a brokered credential, "github": bound to
// github.com, api.github.com and uploads.github.com (agent.yaml amends them),
// in GH_TOKEN, and in GH_ENTERPRISE_TOKEN too when agent.yaml binds it to a
// GitHub Enterprise host; its hosts.yml shown with the placeholder (its
// credential helper reads it there).
policy::BrokeredCredential github_credential(const AgentPaths& paths, const AgentConfig& config);

// The AgentInputs for policy::compose. (The parallex executable its git
// credential helper is, readable in every run, comes from compose itself.)
policy::AgentInputs agent_inputs(const AgentPaths& paths, const AgentConfig& config,
                                 const std::optional<std::string>& token, const fs::path& user_home);

// The user's Claude Code files shared read-only with an agent that has
// share_harness_config: CLAUDE.md, skills/, plugins/ under ~/.claude.
std::vector<fs::path> shared_harness_files(const fs::path& user_home);
// Links them into the agent's ~/.claude. An entry the agent already has of its
// own is left alone (and reported), never replaced.
Result<std::vector<std::string>> link_shared_harness_config(const AgentPaths& paths,
                                                            const fs::path& user_home);

// What in a home makes a harness run commands, by each plugin's own
// declaration of its files (policy/home_files.hpp, the same one the seal of a
// run in the user's home uses): a settings file or folder that holds
// something, a JSON or TOML file's keys that run commands (Claude Code's MCP
// servers, Codex's notify). A sealed run may have written them; an unsealed
// run would run them unconfined, so `agent run --unsealed` names them. One
// line each: the path, and the keys or what it is. Scratch folders are not
// named: a sealed run never writes them (each has its own, dropped).
std::vector<std::string> command_running_settings(const fs::path& home,
                                                  const std::vector<policy::DeclaredHomeFiles>& declared);

struct PreRunSnapshot {
  bool taken = false;
  std::string id;
  std::string note;  // why none was taken, or what it held back
};

// The snapshot of the agent's home before a run (its keys and token live
// outside home/, so they are never in it). The one call site the snapshot
// store fills; without the store built in, no snapshot is taken and `note` says so.
Result<PreRunSnapshot> take_pre_run_snapshot(const AgentPaths& paths, const std::string& run_label);

}  // namespace px::agents
