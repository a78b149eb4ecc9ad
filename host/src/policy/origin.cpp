#include "policy/origin.hpp"

namespace px::policy {

std::string Origin::describe() const {
  switch (kind) {
    case Kind::builtin:
      return source.empty() ? "built-in" : "built-in (" + source + ")";
    case Kind::profile:
      return "profile " + source + (line > 0 ? ":" + std::to_string(line) : "");
    case Kind::plugin:
      return "plugin " + source;
    case Kind::flag:
      return "flag " + source;
    case Kind::agent:
      return "agent " + source + (line > 0 ? " (agent.yaml:" + std::to_string(line) + ")" : "");
    case Kind::project:
      return "project config " + source + (line > 0 ? ":" + std::to_string(line) : "");
  }
  return source;
}

}  // namespace px::policy
