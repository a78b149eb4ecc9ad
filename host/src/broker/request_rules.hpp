#pragma once
// Request rules of a terminated host: method + path pattern, allow or deny,
// first match wins. Pure functions (parsing, path canonicalization, matching),
// so every spelling is a unit test and the whole file is fuzzable.
//
// Rule syntax (one rule): ACTION METHODS [PATTERN]
//   ACTION   allow | deny (in YAML: the key of the entry)
//   METHODS  `*` or a comma-separated list of upper-case methods (GET,HEAD)
//   PATTERN  a path starting with '/': `*` matches within one segment, `**`
//            (a whole segment) matches any number of segments; no query, no
//            percent-escapes. Without a pattern: every path.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace px::broker {

enum class RuleAction { allow, deny };

struct RequestRule {
  RuleAction action = RuleAction::deny;
  std::vector<std::string> methods;   // empty: any method
  std::string pattern = "/**";        // as written (normalized spacing)
  std::vector<std::string> segments;  // the pattern split on '/', first empty one dropped
  std::string reason;                 // shown to the client when this rule refuses
  std::string origin;                 // where it was written, for `policy show`
  // "allow GET,HEAD /**"
  std::string text() const;
};

// One terminated host's rules. `passthrough`: never terminated (pinning
// clients); a passthrough host has no rules.
struct HostRequestRules {
  std::string host;  // a normalized host name (parse_exact_host)
  bool passthrough = false;
  std::vector<RequestRule> rules;
};

// Parses one rule. `action` is "allow" or "deny"; `spec` is "METHODS [PATTERN]".
// Errors name the rule and say what to write instead.
Result<RequestRule> parse_request_rule(std::string_view action, std::string_view spec,
                                       std::string reason = {}, std::string origin = {});
// The same from one line: "allow GET /**".
Result<RequestRule> parse_request_rule_line(std::string_view line, std::string reason = {},
                                            std::string origin = {});

// The path of an origin-form request target as the rules see it: the query
// cut off, percent-escapes of unreserved characters decoded, other escapes in
// upper case. nullopt when the server could read the path differently from
// the rules (dot segments, empty segments, an encoded or raw '\', an encoded
// '/', ';' parameters, a broken escape, a target that does not start with '/').
std::optional<std::string> canonical_path(std::string_view target);

struct RuleDecision {
  bool allowed = true;
  int index = -1;  // the rule that decided; -1: no rules, or none matched
  const RequestRule* rule = nullptr;
};

// First match wins. No rules: allowed. Rules but no match: refused. An allow
// rule matches the path exactly as written (case-sensitive); a deny rule
// catches every case spelling and a trailing '/', so that a server that reads
// paths case-insensitively (GitHub) cannot be reached around it.
RuleDecision decide(const std::vector<RequestRule>& rules, std::string_view method,
                    std::string_view canonical);

// Glob match of a canonical path against a rule's segments.
bool path_matches(const std::vector<std::string>& segments, std::string_view path, bool case_insensitive);

}  // namespace px::broker
