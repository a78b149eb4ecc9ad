// The Policy's host helpers, over the one host rule syntax (common/host_rule.hpp).
#include <cctype>

#include "common/ascii.hpp"
#include "common/host_rule.hpp"
#include "policy/policy.hpp"

namespace px::policy {

std::string normalize_host(std::string_view host) {
  std::string out = ascii_lower(host);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

std::string check_host_pattern(std::string_view pattern) {
  auto rule = parse_host_rule(pattern);
  return rule ? std::string() : rule.error().message;
}

bool host_matches(std::string_view host, std::string_view pattern) {
  return host_rule_matches(host, pattern);
}

}  // namespace px::policy
