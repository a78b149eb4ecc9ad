#pragma once
// The agent's own git: the global config file its runs read (GIT_CONFIG_GLOBAL,
// GIT_CONFIG_NOSYSTEM=1) and the allowed-signers file that verifies its commits.
// Nothing of the user's git config is read or copied.
#include <filesystem>
#include <string>
#include <vector>

#include "agents/store.hpp"
#include "common/error.hpp"

namespace px::agents {

// The shell command git runs as the agent's one credential helper:
// "!'<parallex>' agent credential --store '<agents root>' --host 'H'... NAME",
// one --host for each host its token is bound to (github_token_hosts).
std::string credential_helper_command(const fs::path& parallex_exe, const fs::path& agents_root,
                                      const std::string& name, const std::vector<std::string>& hosts);

// The text of home/.gitconfig. `final` holds the paths the agent has once
// created (the file may be written while it is still being built elsewhere).
Result<std::string> render_gitconfig(const AgentPaths& final, const AgentConfig& config,
                                     const fs::path& parallex_exe);

// "EMAIL namespaces="git" ssh-ed25519 AAAA...".
std::string render_allowed_signers(const std::string& email, const std::string& public_key_line);

// Rewrites home/.gitconfig and keys/allowed_signers from agent.yaml and the
// key (the files are Parallex's own, rebuilt before each run and on `agent set`).
Status write_git_identity(const AgentPaths& paths, const AgentConfig& config, const fs::path& parallex_exe);

// Single-quotes `text` for a POSIX shell.
std::string shell_quote(const std::string& text);

}  // namespace px::agents
