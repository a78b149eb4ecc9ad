#pragma once
// The project's config, `.parallex/config.yaml`. Strict: an unknown key, a
// wrong type or a malformed host is an error naming the file and line.
//
//   sandbox_workspaces: true    # seal workspaced runs (default true)
//   profile: developer          # a profile over the default one (name or YAML file)
//   allow: [github.com]         # hosts workspaced runs may reach (default: every host)
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "policy/policy.hpp"
#include "workspace/project.hpp"

namespace px::workspace {

struct ProjectConfig {
  bool sandbox_workspaces = true;
  int sandbox_workspaces_line = 0;  // 0: the default
  std::optional<std::string> profile;
  int profile_line = 0;
  std::vector<std::string> allow;  // empty: online (every host, through the proxy)
  bool has_allow = false;
};

// The network of the project's workspaced runs when neither the command line
// nor an agent names one: its hosts (`allow:`), or online (every host, through
// the run's proxy, logged). The one place this default is decided.
policy::NetworkMode project_network(const ProjectConfig& config);

Result<ProjectConfig> parse_project_config(std::string_view yaml_text, const std::string& display_name);
// A missing file is the default config; an unreadable or malformed one is an error.
Result<ProjectConfig> load_project_config(const std::filesystem::path& file);

// A config that git tracks was written by whoever can commit to the
// repository (a clone of someone else's project holds theirs): it may narrow
// what the project's workspaced runs get (a host list, a profile by name, one
// you installed or a built-in one) but never turn the seal off or name a
// profile file of the repository's own. An error says which line and how to
// keep the setting as your own.
Status check_config_trust(const ProjectConfig& config, const Project& project);

}  // namespace px::workspace
