#include "proxy/live_rules.hpp"

#include <algorithm>

namespace px::proxy {

std::string_view to_string(RuleChange::Kind k) {
  return k == RuleChange::Kind::allow ? "allow" : "deny";
}

std::vector<std::uint16_t> LiveRules::apply(std::string_view name, std::vector<std::uint16_t> ports,
                                            const std::vector<std::uint16_t>& network_ports) const {
  for (const RuleChange& c : changes_) {
    if (!host_rule_matches(name, c.rule.pattern)) continue;
    if (c.kind == RuleChange::Kind::allow) {
      if (c.rule.port)
        ports.push_back(*c.rule.port);
      else
        ports.insert(ports.end(), network_ports.begin(), network_ports.end());
    } else if (c.rule.port) {
      std::erase(ports, *c.rule.port);
    } else {
      ports.clear();
    }
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return ports;
}

}  // namespace px::proxy
