#include "workspace/config.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "policy/policy.hpp"

namespace px::workspace {

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

Result<ProjectConfig> parse_project_config(std::string_view yaml_text, const std::string& display_name) {
  try {
    return parse_root(YAML::Load(std::string(yaml_text)), display_name);
  } catch (const YAML::Exception& e) {
    return Error::invalid(display_name + ":" + std::to_string(e.mark.line + 1) +
                          ": malformed YAML: " + e.msg);
  }
}

Result<ProjectConfig> load_project_config(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return ProjectConfig{};
  std::ifstream in(file);
  if (!in) return Error::io("cannot read " + file.string(), errno);
  std::stringstream text;
  text << in.rdbuf();
  return parse_project_config(text.str(), file.string());
}

}  // namespace px::workspace
