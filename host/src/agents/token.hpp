#pragma once
// The agent's GitHub token, kept in its own gh config (GH_CONFIG_DIR = gh/):
// hosts.yml, 0600, beside its keys. Without a token, gh and the credential
// helper get a placeholder that GitHub refuses, so nothing falls back to the
// user's keychain or gh sign-in.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/store.hpp"
#include "common/error.hpp"

namespace px::agents {

// What runs get in GH_TOKEN (and hosts.yml holds) when the agent has no token.
inline constexpr std::string_view placeholder_token = "parallex-agent-has-no-github-token";

// github_pat_... (fine-grained) or ghp_... (classic). The message never shows the value.
Status check_token_shape(std::string_view token);

// GitHub's new fine-grained token page, filled in through its URL parameters.
std::string token_page_url(const AgentConfig& config, int expires_days);

// Writes gh/config.yml (once) and gh/hosts.yml (0600) holding `token`.
Status store_token(const fs::path& gh_dir, const std::string& name, std::string_view token);
// The placeholder in hosts.yml, for an agent without a token.
Status store_placeholder(const fs::path& gh_dir, const std::string& name);

// The token from gh/hosts.yml (registered with the redactor), or nullopt when
// there is none (no file, or the placeholder). A damaged file is an error naming it.
Result<std::optional<std::string>> load_token(const fs::path& gh_dir);

// The hosts the agent's token is bound to: those agent.yaml names
// (`credentials: {github: {hosts: [...]}}`, normalized), GitHub's
// own otherwise. Its credential helper answers for these hosts and no other.
std::vector<std::string> github_token_hosts(const AgentConfig& config);
// The same, for a sentence: "github.com, api.github.com and uploads.github.com".
std::string github_token_hosts_text(const AgentConfig& config);

// A host gh calls GitHub Enterprise (neither github.com nor a name under it):
// gh reads the token for it from GH_ENTERPRISE_TOKEN, not GH_TOKEN.
bool is_github_enterprise_host(std::string_view host);

// Reads one line from stdin without echo when it is a terminal.
Result<std::string> read_secret_line(const std::string& prompt);

}  // namespace px::agents
