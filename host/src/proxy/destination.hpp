#pragma once
// The one decision every way into the proxy takes before anything is resolved:
// a CONNECT, a plain HTTP request, a connection captured inside the run (its
// name recovered from the synthetic address it was made to) and the run's DNS
// (which asks only whether a name may be reached on some port). After it, the
// same code resolves the name, refuses local answers unless Local servers is
// on, connects to exactly the addresses checked, checks the TLS server name
// and logs (connection.cpp).
#include <cstdint>
#include <string_view>
#include <vector>

#include "proxy/host_rules.hpp"
#include "proxy/proxy.hpp"

namespace px::proxy {

enum class Route { refuse, loopback, resolve };

struct DestinationDecision {
  Route route = Route::refuse;
  Verdict verdict;       // why, when refused
  bool by_rule = false;  // refused by the network rule: listed at the end of the run
};

// `target.host` is a normalized name (check_host_name passed). `config` is
// validated (its rules parsed).
DestinationDecision decide_destination(const ProxyConfig& config, const HostPort& target);

// The ports on which `name` may be reached, sorted; empty when it may not be
// reached at all (outside the rule, offline).
std::vector<std::uint16_t> allowed_ports_for(const ProxyConfig& config, std::string_view name);

}  // namespace px::proxy
