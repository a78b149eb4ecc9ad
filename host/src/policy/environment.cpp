#include "policy/environment.hpp"

#include <algorithm>
#include <cctype>

namespace px::policy {

bool EnvPattern::matches(std::string_view name) const {
  std::string_view p = pattern;
  if (p == "*") return true;
  if (p.size() > 1 && p.back() == '*') return name.substr(0, p.size() - 1) == p.substr(0, p.size() - 1);
  if (p.size() > 1 && p.front() == '*')
    return name.size() >= p.size() - 1 && name.substr(name.size() - (p.size() - 1)) == p.substr(1);
  return name == p;
}

std::string check_env_pattern(std::string_view pattern) {
  if (pattern.empty()) return "an environment pattern is empty";
  std::string_view core = pattern;
  if (core == "*") return {};
  if (core.front() == '*') core.remove_prefix(1);
  else if (core.back() == '*') core.remove_suffix(1);
  if (core.empty()) return "the pattern '" + std::string(pattern) + "' has no name part";
  for (char c : core)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return "the pattern '" + std::string(pattern) +
             "' may hold only letters, digits and '_', with one '*' at its start or end";
  return {};
}

std::string check_env_name(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 256 &&
                  (std::isalpha(static_cast<unsigned char>(name.front())) || name.front() == '_') &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                  });
  if (ok) return {};
  std::string shown(name.substr(0, 64));
  for (auto& c : shown)
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  return "'" + shown + "' is not a variable name: use letters, digits and '_', not starting with a digit";
}

const EnvPattern* EnvironmentRules::passing(std::string_view name) const {
  for (const auto& p : pass)
    if (p.pattern == name) return &p;
  return nullptr;
}

const EnvPattern* EnvironmentRules::stripping(std::string_view name) const {
  for (const auto& p : strip)
    if (p.matches(name)) return &p;
  return nullptr;
}

const EnvPattern* EnvironmentRules::keeping(std::string_view name) const {
  for (const auto& p : keep)
    if (p.matches(name)) return &p;
  return nullptr;
}

std::map<std::string, std::string> EnvironmentRules::apply(
    const std::map<std::string, std::string>& host) const {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : host)
    if (passing(name) || (keeping(name) && !stripping(name))) out[name] = value;
  for (const auto& s : set) out[s.name] = s.value;
  return out;
}

}  // namespace px::policy
