#pragma once
// Where a policy entry came from, so a user can see why a path is open.
#include <string>

namespace px::policy {

struct Origin {
  enum class Kind { builtin, profile, plugin, flag, agent, project };
  Kind kind = Kind::builtin;
  std::string source;  // profile file, plugin name, flag name, agent name
  int line = 0;        // for profiles: 1-based line in `source`

  static Origin builtin(std::string why = {}) { return {Kind::builtin, std::move(why), 0}; }
  static Origin profile(std::string file, int line) { return {Kind::profile, std::move(file), line}; }
  static Origin plugin(std::string name) { return {Kind::plugin, std::move(name), 0}; }
  static Origin flag(std::string name) { return {Kind::flag, std::move(name), 0}; }
  static Origin agent(std::string name) { return {Kind::agent, std::move(name), 0}; }

  // "profile default.yaml:12", "plugin claude-code", "flag --grant", "built-in".
  std::string describe() const;
};

}  // namespace px::policy
