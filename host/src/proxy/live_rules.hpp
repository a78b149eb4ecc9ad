#pragma once
// The changes made to a running run's network rule: `parallex allow --run`,
// `parallex deny --run`, and answers "for this run" to a question of ask mode.
// Applied in the order they were made over what the run started with, so the
// latest word on a name is the one that counts (deny then allow: allowed).
// Pure; the proxy keeps one on its io thread.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/host_rule.hpp"

namespace px::proxy {

struct RuleChange {
  enum class Kind { allow, deny };
  Kind kind = Kind::allow;
  HostRuleSpec rule;  // "api.example.com", "*.corp.example", "github.com:22"
  std::string by;     // who: "parallex allow --run (uid 1000)", "answer to question 3"
  std::string at;     // ISO-8601, UTC
};
std::string_view to_string(RuleChange::Kind k);

class LiveRules {
 public:
  void add(RuleChange change) { changes_.push_back(std::move(change)); }
  const std::vector<RuleChange>& changes() const { return changes_; }
  bool empty() const { return changes_.empty(); }

  // `ports`: where `name` may go by the run's own rule (sorted, unique).
  // Returns them with every change that matches `name` applied in order; an
  // allow without a port adds `network_ports`, a deny without one removes all.
  std::vector<std::uint16_t> apply(std::string_view name, std::vector<std::uint16_t> ports,
                                   const std::vector<std::uint16_t>& network_ports) const;

 private:
  std::vector<RuleChange> changes_;
};

}  // namespace px::proxy
