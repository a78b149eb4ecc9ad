#pragma once
// Environment rules: the child gets only host variables that a keep pattern
// admits and no strip pattern removes (strip beats keep), then the variables
// the policy sets. An allowlist, so a secret in an unexpected variable stays out.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "policy/origin.hpp"

namespace px::policy {

// An exact name, a prefix pattern "AWS_*", a suffix pattern "*_SECRET", or "*".
struct EnvPattern {
  std::string pattern;
  std::string reason;
  Origin origin;
  bool matches(std::string_view name) const;
};

// The reason of a variable set by `--env NAME=VALUE` or an agent's env: the
// run's record lists such names as passed on purpose.
inline constexpr const char* kSetOnPurpose = "set on purpose";

struct EnvSet {
  std::string name;
  std::string value;
  std::string reason;
  Origin origin;
  bool secret = false;  // shown as [REDACTED] in `policy show`
};

struct EnvironmentRules {
  std::vector<EnvPattern> keep;
  std::vector<EnvPattern> strip;
  // Variables passed on purpose, by exact name (`--env NAME`, `environment:
  // pass` in a profile, `env` in agent.yaml): they beat strip, so a
  // credential reaches a run only when it is named this way.
  std::vector<EnvPattern> pass;
  std::vector<EnvSet> set;

  // The child's environment from the host's. Set variables win over all.
  std::map<std::string, std::string> apply(const std::map<std::string, std::string>& host) const;
  const EnvPattern* passing(std::string_view name) const;
  // Why `name` is kept or dropped (for `policy show --explain-env`).
  const EnvPattern* stripping(std::string_view name) const;
  const EnvPattern* keeping(std::string_view name) const;
};

// Returns an error message when `pattern` is not a valid pattern, else empty.
std::string check_env_pattern(std::string_view pattern);
// Returns an error message when `name` is not a variable name (a letter or
// '_', then letters, digits and '_'), else empty.
std::string check_env_name(std::string_view name);

// What an environment rule does, for check_env_rule.
enum class EnvRuleKind { keep, strip, set, pass };

// The one check of an environment rule from any source, "" when it is
// allowed, else the rule it breaks (value_checks.hpp's wording):
//  - its syntax (check_env_name for set and pass, check_env_pattern else);
//  - what Parallex sets in every run (HOME, TMPDIR, the proxy's variables,
//    NO_PROXY, PARALLEX_*) is set by Parallex alone;
//  - a plugin may not keep or set the loader's variables (LD_*, DYLD_*) or
//    the shell's start-up files (BASH_ENV, ENV), nor keep what Parallex sets,
//    nor keep by a wildcard that takes secrets along: "*" or a suffix
//    pattern ("*_KEY" keeps every provider's key). A strip never widens a
//    run and is only checked for its syntax.
std::string check_env_rule(EnvRuleKind kind, std::string_view text, Origin::Kind from);

}  // namespace px::policy
