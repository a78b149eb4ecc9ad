#pragma once
// Every key and value of a YAML document Parallex reads (a profile,
// agent.yaml, a project's .parallex/config.yaml) through the one NUL check
// (common/shown.hpp), at load time: YAML spells a NUL byte "\0" in a quoted
// string, and a path or a variable holding one would be cut short where it
// reaches the kernel (`read: ["/tmp/a\0b"]` would grant /tmp/a).
#include <yaml-cpp/yaml.h>

#include <string>

#include "common/error.hpp"

namespace px::policy {

// An error naming `file`, the line, the key and the value (shown) of the
// first key or value that holds a NUL byte.
Status refuse_nul_in_yaml(const YAML::Node& root, const std::string& file);

}  // namespace px::policy
