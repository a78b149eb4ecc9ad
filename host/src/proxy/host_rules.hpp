#pragma once
// The host rule: which names a request may reach. Pure functions, no I/O, so
// that every spelling in the escape list is a unit test and the whole file is
// fuzzable. A name that fails here is never handed to a resolver.
#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace px::proxy {

// status 0 means "go on"; otherwise the HTTP status and reason to refuse with.
struct Verdict {
  int status = 0;
  std::string_view reason;
  bool ok() const { return status == 0; }
};

struct HostPort {
  std::string host;  // normalized: lower case, no trailing dot
  std::uint16_t port = 0;
};

// Accepts only plain DNS names (common/host_rule.hpp's check_dns_name) and
// turns its problems into answers: IP literals in any spelling (dotted,
// decimal, hex, octal, short, bracketed IPv6) are refused with 403; syntax
// errors (empty labels, '_', '%', '@', non-ASCII, over-long names) with 400.
Verdict check_host_name(std::string_view raw, std::string& normalized);

// Splits "host[:port]" and checks both parts. A port is digits only, no sign,
// no leading zero, 1..65535. `port_required` is true for CONNECT.
Verdict parse_authority(std::string_view authority, bool port_required, std::uint16_t default_port,
                        HostPort& out);

// "localhost", "127.0.0.1" or "[::1]" (as parse_authority leaves them): the
// names by which a client means this machine. Only Local servers reaches them.
bool is_loopback_name(std::string_view host);

// True when `host` equals `rule` or is a subdomain of it (on a label boundary);
// a rule "*.example.com" matches its subdomains only. Both normalized.
bool host_matches(std::string_view host, std::string_view rule);

// Where an address points. Everything but `global` is refused unless Local
// servers is on.
enum class AddressClass {
  global,
  unspecified,
  loopback,
  private_use,   // RFC 1918, CGNAT 100.64/10
  link_local,    // 169.254/16, fe80::/10
  unique_local,  // fc00::/7 (and the deprecated site-local fec0::/10)
  v4_mapped,     // ::ffff:0:0/96, ::/96 compat, 64:ff9b::/96 NAT64
  multicast,
  reserved,  // 0/8, 240/4, broadcast, documentation and benchmarking ranges
};
AddressClass classify(const boost::asio::ip::address& address);
std::string_view to_string(AddressClass c);

}  // namespace px::proxy
