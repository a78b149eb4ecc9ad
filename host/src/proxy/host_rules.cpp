#include "proxy/host_rules.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "common/ascii.hpp"
#include "common/host_rule.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy {
namespace {

constexpr Verdict bad(std::string_view r) {
  return {400, r};
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

Verdict check_host_name(std::string_view raw, std::string& normalized) {
  switch (check_dns_name(raw, normalized)) {
    case NameProblem::none:
      return {};
    case NameProblem::ip_literal:
      return {403, reason::ip_literal};
    case NameProblem::userinfo:
      return bad(reason::userinfo);
    case NameProblem::empty:
    case NameProblem::too_long:
    case NameProblem::bad_label:
    case NameProblem::bad_character:
      return bad(reason::bad_host);
  }
  return bad(reason::bad_host);
}

Verdict parse_authority(std::string_view authority, bool port_required, std::uint16_t default_port,
                        HostPort& out) {
  out = {};
  if (authority.empty()) return bad(reason::bad_host);
  if (authority.find('@') != std::string_view::npos) return bad(reason::userinfo);
  std::string_view host = authority;
  std::string_view port;
  bool has_port = false;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad(reason::bad_host);
    host = authority.substr(0, close + 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad(reason::bad_host);
      has_port = true;
      port = rest.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      if (authority.find(':', colon + 1) != std::string_view::npos) {
        // host:443:80 is malformed; a bare IPv6 literal is an address.
        std::string ignored;
        return check_dns_name(authority, ignored) == NameProblem::ip_literal
                   ? Verdict{403, reason::ip_literal}
                   : bad(reason::bad_port);
      }
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      has_port = true;
    }
  }
  std::uint16_t port_value = default_port;
  if (has_port) {
    if (port.empty() || port.size() > 5 || port.front() == '0' ||
        !std::all_of(port.begin(), port.end(), is_digit)) {
      return bad(reason::bad_port);
    }
    unsigned long value = 0;
    for (char c : port) value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value == 0 || value > 65535) return bad(reason::bad_port);
    port_value = static_cast<std::uint16_t>(value);
  } else if (port_required) {
    return bad(reason::bad_port);
  }
  std::string normalized;
  const Verdict v = check_host_name(host, normalized);
  if (v.reason == reason::ip_literal) {
    // Refused, but told apart: the literal (lower case, at most a name's
    // length) and the port go to the log as the fields they are.
    out.host.assign(host.substr(0, 255));
    out.host = ascii_lower(out.host);
    out.port = port_value;
  }
  if (!v.ok()) return v;
  out.host = std::move(normalized);
  out.port = port_value;
  return {};
}

bool is_loopback_name(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

bool host_matches(std::string_view host, std::string_view rule) {
  return host_rule_matches(host, rule);
}

namespace {

struct V4Range {
  std::uint32_t base;
  int bits;
  AddressClass cls;
};

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return a << 24 | b << 16 | c << 8 | d;
}

// The documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24) are not
// listed: they are not internal networks, and some sites route real gateways
// through them (package mirrors here resolve to 203.0.113.x).
constexpr std::array<V4Range, 13> kV4Ranges{{
    {v4(0, 0, 0, 0), 32, AddressClass::unspecified},
    {v4(0, 0, 0, 0), 8, AddressClass::reserved},
    {v4(10, 0, 0, 0), 8, AddressClass::private_use},
    {v4(100, 64, 0, 0), 10, AddressClass::private_use},
    {v4(127, 0, 0, 0), 8, AddressClass::loopback},
    {v4(169, 254, 0, 0), 16, AddressClass::link_local},
    {v4(172, 16, 0, 0), 12, AddressClass::private_use},
    {v4(192, 0, 0, 0), 24, AddressClass::reserved},
    {v4(192, 168, 0, 0), 16, AddressClass::private_use},
    {v4(198, 18, 0, 0), 15, AddressClass::reserved},
    {v4(224, 0, 0, 0), 4, AddressClass::multicast},
    {v4(240, 0, 0, 0), 4, AddressClass::reserved},  // includes 255.255.255.255
    {v4(255, 255, 255, 255), 32, AddressClass::reserved},
}};

AddressClass classify_v4(std::uint32_t a) {
  for (const auto& r : kV4Ranges) {
    const std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
    if ((a & mask) == r.base) return r.cls;
  }
  return AddressClass::global;
}

}  // namespace

AddressClass classify(const boost::asio::ip::address& address) {
  if (address.is_v4()) return classify_v4(address.to_v4().to_uint());
  const auto b = address.to_v6().to_bytes();
  const auto zero_prefix = [&](std::size_t n) {
    return std::all_of(b.begin(), b.begin() + static_cast<long>(n), [](unsigned char x) { return x == 0; });
  };
  if (zero_prefix(16)) return AddressClass::unspecified;
  if (zero_prefix(15) && b[15] == 1) return AddressClass::loopback;
  // IPv4 inside IPv6 (mapped, compatible, NAT64) could carry any IPv4 range.
  if (zero_prefix(10) && b[10] == 0xff && b[11] == 0xff) return AddressClass::v4_mapped;
  if (zero_prefix(12)) return AddressClass::v4_mapped;
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) return AddressClass::v4_mapped;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::link_local;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::unique_local;
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::unique_local;
  if (b[0] == 0xff) return AddressClass::multicast;
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return AddressClass::reserved;
  if (b[0] == 0x20 && b[1] == 0x02) return AddressClass::v4_mapped;  // 6to4 embeds an IPv4 address
  return AddressClass::global;
}

std::string_view to_string(AddressClass c) {
  switch (c) {
    case AddressClass::global:
      return "global";
    case AddressClass::unspecified:
      return "unspecified";
    case AddressClass::loopback:
      return "loopback";
    case AddressClass::private_use:
      return "private";
    case AddressClass::link_local:
      return "link-local";
    case AddressClass::unique_local:
      return "unique-local";
    case AddressClass::v4_mapped:
      return "ipv4-in-ipv6";
    case AddressClass::multicast:
      return "multicast";
    case AddressClass::reserved:
      return "reserved";
  }
  return "unknown";
}

}  // namespace px::proxy
