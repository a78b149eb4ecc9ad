#pragma once
// Where a connection goes, and the one decision every way into the proxy
// takes before anything is resolved: a CONNECT, a plain HTTP request, a
// connection captured inside the run (its name recovered from the synthetic
// address it was made to) and the run's DNS (which asks only whether a name
// may be reached on some port). After it, the same code resolves the name,
// refuses local answers unless Local servers is on and connects to exactly
// the addresses checked (upstream.cpp), then relays (pump.cpp) or hands the
// connection to the broker (broker_handoff.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/host_rules.hpp"
#include "proxy/proxy.hpp"

namespace px::proxy {

// Where one client connection goes, as the intake it came through made it out
// (intake_explicit.cpp, intake_captured.cpp, intake_published.cpp). The rest
// of a connection reads this value, never how the client reached the proxy.
struct Destination {
  enum class Named {
    connect,       // CONNECT host:port to the proxy: answered 200, then a tunnel
    http_request,  // GET http://host/... to the proxy: one request, forwarded in origin form
    captured,      // the synthetic address (or mirrored port) a connection inside the run was made to
    published,     // a port published from the run, connected to from this machine
  };
  Named named = Named::connect;
  // A name check_host_name passed (or localhost, or a loopback literal), and
  // the port. An empty host means no name could be told (the refusal then
  // echoes none).
  HostPort endpoint;
  // The client's bytes already read, which go first to the upstream (or to
  // the broker): what a CONNECT client sent after its head, a captured
  // connection's first bytes, a plain request's head as sent (rewritten before
  // it goes upstream) and the start of its body. A tunnel also holds here
  // what arrives while its ClientHello is checked.
  std::string first_bytes;
  // A tunnel's first bytes were checked before any upstream was contacted (a
  // captured connection on 80 or 443), or need no check (a published port):
  // the tunnel opens without looking for a ClientHello.
  bool first_bytes_checked = false;
  // The broker may take the connection when its host is terminated: every
  // destination but a published port, which leads from this machine into the
  // run and so carries nothing of the run's out.
  bool broker_may_take = true;

  // Bytes relayed as they are, both ways; false: one plain HTTP request.
  bool tunnel() const { return named != Named::http_request; }
};

enum class Route { refuse, loopback, resolve };

struct DestinationDecision {
  Route route = Route::refuse;
  Verdict verdict;       // why, when refused
  bool by_rule = false;  // refused by the network rule: listed at the end of the run
};

// `target.host` is a normalized name (check_host_name passed). `config` is
// validated (its rules parsed); `ports` are where the name may go now
// (ServerCore::ports_for: the run's rule with its live changes).
DestinationDecision decide_destination(const ProxyConfig& config, const std::vector<std::uint16_t>& ports,
                                       const HostPort& target);

// Whether a refusal by the rule may be asked about in ask mode instead: a
// name outside the rule, a port it does not allow, an offline run. Never this
// machine (Local servers), an address literal or a malformed name.
bool askable(std::string_view reason);

// The ports on which `name` may be reached by the rule the run started with,
// sorted; empty when it may not be reached at all (outside the rule, offline).
std::vector<std::uint16_t> allowed_ports_for(const ProxyConfig& config, std::string_view name);

}  // namespace px::proxy
