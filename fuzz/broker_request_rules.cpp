// libFuzzer target for request rules: the input's first line is a rule as a
// user writes it, the rest a request target. A rule that parses must print
// back to a rule that parses the same; a canonical path must be one the
// canonicalizer keeps as it is; deciding never crashes or loops.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "broker/request_rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace px::broker;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  const std::string_view line = input.substr(0, nl);
  const std::string_view target = nl == std::string_view::npos ? std::string_view("/") : input.substr(nl + 1);

  auto rule = parse_request_rule_line(line, "reason");
  if (rule) {
    auto again = parse_request_rule_line(rule.value().text());
    if (!again || again.value().text() != rule.value().text()) __builtin_trap();
  }
  const auto path = canonical_path(target);
  if (path) {
    if (path->empty() || path->front() != '/') __builtin_trap();
    const auto twice = canonical_path(*path);
    if (!twice || *twice != *path) __builtin_trap();
    if (rule) {
      const std::vector<RequestRule> rules = {rule.value()};
      for (const char* method : {"GET", "POST", "DELETE"}) {
        const RuleDecision d = decide(rules, method, *path);
        if (d.allowed && rule.value().action == RuleAction::deny && d.rule != nullptr) __builtin_trap();
      }
    }
  }
  return 0;
}
