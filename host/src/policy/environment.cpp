#include "policy/environment.hpp"

#include <algorithm>
#include <cctype>

#include "common/shown.hpp"

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
  if (core.front() == '*')
    core.remove_prefix(1);
  else if (core.back() == '*')
    core.remove_suffix(1);
  if (core.empty()) return "the pattern '" + shown(pattern) + "' has no name part";
  for (char c : core)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return "the pattern '" + shown(pattern) +
             "' may hold only letters, digits and '_', with one '*' at its start or end";
  return {};
}

std::string check_env_name(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 256 &&
                  (std::isalpha(static_cast<unsigned char>(name.front())) || name.front() == '_') &&
                  std::all_of(name.begin(), name.end(),
                              [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (ok) return {};
  return "'" + shown(name.substr(0, 64)) + (name.size() > 64 ? "..." : "") +
         "' is not a variable name: use letters, digits and '_' (ASCII), not starting with a digit";
}

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Whether `pattern` (an exact name, or "PREFIX*") admits a name in `names`
// or one starting with a prefix in `prefixes`.
bool admits(std::string_view pattern, std::initializer_list<std::string_view> names,
            std::initializer_list<std::string_view> prefixes) {
  const bool wildcard = pattern.size() > 1 && pattern.back() == '*';
  const std::string_view stem = wildcard ? pattern.substr(0, pattern.size() - 1) : pattern;
  for (std::string_view n : names)
    if (wildcard ? starts_with(n, stem) : n == stem) return true;
  for (std::string_view p : prefixes)
    if (starts_with(stem, p) || (wildcard && starts_with(p, stem))) return true;
  return false;
}

// Set by Parallex for every run (compose.cpp, proxy_environment,
// RunControl::child_environment): the run's home and temp dir, its proxy,
// who it is.
bool parallex_sets(std::string_view pattern) {
  return admits(pattern,
                {"HOME", "TMPDIR", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy",
                 "https_proxy", "all_proxy", "no_proxy"},
                {"PARALLEX_"});
}

// What loads code into every process of the run, or runs a file when a shell starts.
bool loads_code(std::string_view pattern) {
  return admits(pattern, {"BASH_ENV", "ENV"}, {"LD_", "DYLD_"});
}

}  // namespace

std::string check_env_rule(EnvRuleKind kind, std::string_view text, Origin::Kind from) {
  const bool exact = kind == EnvRuleKind::set || kind == EnvRuleKind::pass;
  if (auto problem = exact ? check_env_name(text) : check_env_pattern(text); !problem.empty())
    return "is not valid: " + problem;
  if (from == Origin::Kind::builtin || kind == EnvRuleKind::strip) return {};
  if (kind == EnvRuleKind::set && parallex_sets(text))
    return "is a variable Parallex sets for every run (HOME, TMPDIR, the proxy's, NO_PROXY, PARALLEX_*): "
           "only Parallex sets it";
  if (from != Origin::Kind::plugin) return {};
  if (kind == EnvRuleKind::keep && text == "*")
    return "keeps every variable; a plugin may keep only its harness's own";
  if (kind == EnvRuleKind::keep && text.front() == '*')
    return "keeps every variable ending in " + std::string(text.substr(1)) +
           ", a secret of any program among them; keep the harness's own names or its prefix (NAME_*)";
  if (kind == EnvRuleKind::keep && parallex_sets(text))
    return "would take what Parallex sets for every run (HOME, TMPDIR, the proxy's, NO_PROXY, PARALLEX_*) "
           "from the caller's environment";
  if (loads_code(text))
    return "names what loads code into every program of the run (LD_*, DYLD_*) or runs a file when a shell "
           "starts (BASH_ENV, ENV); a plugin may not " +
           std::string(kind == EnvRuleKind::set ? "set" : "keep") + " it";
  return {};
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
