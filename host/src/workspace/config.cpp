#include "workspace/config.hpp"

#include <yaml-cpp/yaml.h>

#include "common/read_file.hpp"
#include "policy/policy.hpp"
#include "policy/yaml_values.hpp"

namespace px::workspace {

namespace fs = std::filesystem;

namespace {

int line_of(const YAML::Node& node) {
  return node.Mark().line + 1;
}

Error at(const std::string& file, const YAML::Node& node, const std::string& what) {
  return Error::invalid(file + ":" + std::to_string(line_of(node)) + ": " + what);
}

Result<ProjectConfig> parse_root(const YAML::Node& root, const std::string& file) {
  ProjectConfig config;
  if (!root || root.IsNull()) return config;  // an empty file is the default
  PX_TRY(policy::refuse_nul_in_yaml(root, file));
  if (!root.IsMap())
    return at(file, root, "the config must be a mapping of keys (sandbox_workspaces, profile, allow)");
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    if (key == "sandbox_workspaces") {
      bool on = true;
      if (!value.IsScalar() || !YAML::convert<bool>::decode(value, on))
        return at(file, value, "sandbox_workspaces: expected true or false");
      config.sandbox_workspaces = on;
      config.sandbox_workspaces_line = line_of(kv.first);
    } else if (key == "profile") {
      if (!value.IsScalar() || value.Scalar().empty())
        return at(file, value,
                  "profile: expected a profile name (default, offline, developer) or a YAML file");
      config.profile = value.Scalar();
      config.profile_line = line_of(kv.first);
    } else if (key == "allow") {
      if (!value.IsSequence()) return at(file, value, "allow: expected a list of hosts, e.g. [github.com]");
      config.has_allow = true;
      for (const auto& h : value) {
        if (!h.IsScalar()) return at(file, h, "allow: expected a host name, e.g. github.com");
        if (auto problem = policy::check_host_pattern(h.Scalar()); !problem.empty())
          return at(file, h, "allow: " + problem);
        config.allow.push_back(h.Scalar());
      }
    } else {
      return at(file, kv.first,
                "unknown key '" + key + "'; the known keys are sandbox_workspaces, profile and allow");
    }
  }
  return config;
}

}  // namespace

policy::NetworkMode project_network(const ProjectConfig& config) {
  return config.has_allow ? policy::NetworkMode::allowlist : policy::NetworkMode::online;
}

Result<ProjectConfig> parse_project_config(std::string_view yaml_text, const std::string& display_name) {
  try {
    return parse_root(YAML::Load(std::string(yaml_text)), display_name);
  } catch (const YAML::Exception& e) {
    return Error::invalid(display_name + ":" + std::to_string(e.mark.line + 1) +
                          ": malformed YAML: " + e.msg);
  }
}

Result<ProjectConfig> load_project_config(const std::filesystem::path& file) {
  auto text = read_regular_file(file, {.max_bytes = 256 * 1024});
  if (!text && text.error().kind == ErrorKind::not_found) return ProjectConfig{};
  if (!text)
    return Error{text.error().kind,
                 "the project's config " + text.error().message + "; make it a YAML file or remove it"};
  return parse_project_config(text.value(), file.string());
}

Status check_config_trust(const ProjectConfig& config, const Project& project) {
  const bool widens_seal = !config.sandbox_workspaces;
  const bool profile_file =
      config.profile && (config.profile->find('/') != std::string::npos ||
                         config.profile->ends_with(".yaml") || config.profile->ends_with(".yml"));
  if (!widens_seal && !profile_file) return ok();
  const fs::path file = project.config_file();
  if (!tracked_by_git(project, file)) return ok();
  const std::string where =
      file.string() + ":" +
      std::to_string(widens_seal ? config.sandbox_workspaces_line : config.profile_line);
  const std::string what =
      widens_seal ? "sets sandbox_workspaces: false" : "names the profile file " + *config.profile;
  return Error::policy(
      where + " " + what +
      ", but git tracks the file: whoever can commit to this repository could change the seal "
      "of your runs. Keep the setting in a file of your own: `git rm --cached " +
      file.lexically_relative(project.root).string() +
      "` (the file stays; add it to .git/info/exclude), or remove the line");
}

}  // namespace px::workspace
