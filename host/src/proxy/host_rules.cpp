#include "proxy/host_rules.hpp"

#include <algorithm>
#include <array>

#include "proxy/reasons.hpp"

namespace px::proxy {
namespace {

constexpr Verdict bad(std::string_view r) { return {400, r}; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// inet_aton and the WHATWG URL parser read a name whose last label is a number
// (decimal, 0x-hex, or octal, which is decimal digits too) as an IPv4 address:
// 127.1, 0x7f.1, 2130706433, 0177.0.0.1. Such names never reach a resolver.
// An unbracketed IPv6 literal (::1, fe80::1): hex digits, ':' and '.' only.
bool looks_like_ipv6(std::string_view s) {
  return std::count(s.begin(), s.end(), ':') >= 2 && std::all_of(s.begin(), s.end(), [](char c) {
           return is_hex(lower(c)) || c == ':' || c == '.';
         });
}

bool last_label_is_number(std::string_view label) {
  if (label.empty()) return false;
  if (std::all_of(label.begin(), label.end(), is_digit)) return true;
  if (label.size() >= 2 && label[0] == '0' && label[1] == 'x') {
    return std::all_of(label.begin() + 2, label.end(), is_hex);
  }
  return false;
}

}  // namespace

Verdict check_host_name(std::string_view raw, std::string& normalized) {
  normalized.clear();
  if (raw.empty()) return bad(reason::bad_host);
  if (raw.front() == '[') {
    // A bracketed IPv6 literal ([::1], [::ffff:127.0.0.1], [fe80::1%eth0]).
    return raw.back() == ']' ? Verdict{403, reason::ip_literal} : bad(reason::bad_host);
  }
  if (raw.find('@') != std::string_view::npos) return bad(reason::userinfo);
  if (raw.size() > 254) return bad(reason::bad_host);
  for (char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    // Non-ASCII, percent-encoding and anything outside letters, digits, '-'
    // and '.' (including '_', '*', ':', '\\') are refused, never decoded.
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '.';
    if (!ok || u >= 0x80) {
      // An unbracketed IPv6 literal is still an address, and is told as such.
      if (looks_like_ipv6(raw)) return {403, reason::ip_literal};
      return bad(reason::bad_host);
    }
  }
  std::string_view name = raw;
  if (name.back() == '.') name.remove_suffix(1);  // one trailing dot: the root
  if (name.empty() || name.size() > 253) return bad(reason::bad_host);

  normalized.reserve(name.size());
  std::string_view last_label;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view label = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty() || label.size() > 63) return bad(reason::bad_host);
    if (label.front() == '-' || label.back() == '-') return bad(reason::bad_host);
    last_label = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::transform(name.begin(), name.end(), std::back_inserter(normalized), lower);
  std::string last(last_label);
  std::transform(last.begin(), last.end(), last.begin(), lower);
  if (last_label_is_number(last)) {
    normalized.clear();
    return {403, reason::ip_literal};
  }
  return {};
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
        return looks_like_ipv6(authority) ? Verdict{403, reason::ip_literal} : bad(reason::bad_port);
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
    std::transform(out.host.begin(), out.host.end(), out.host.begin(), lower);
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
  if (rule.empty() || host.size() < rule.size()) return false;
  if (host.size() == rule.size()) return host == rule;
  return host.substr(host.size() - rule.size()) == rule && host[host.size() - rule.size() - 1] == '.';
}

bool host_allowed(std::string_view host, const std::vector<std::string>& rules) {
  return std::any_of(rules.begin(), rules.end(), [&](const std::string& r) { return host_matches(host, r); });
}

Result<std::string> normalize_rule(std::string_view entry) {
  const std::string shown(entry.substr(0, 100));
  if (entry.rfind("*.", 0) == 0 || entry.rfind(".", 0) == 0) {
    return Error::invalid("The allowed host '" + shown + "' uses a wildcard; write '" +
                          std::string(entry.substr(entry.find('.') + 1, 100)) +
                          "' instead, which already covers its subdomains.");
  }
  std::string normalized;
  const Verdict v = check_host_name(entry, normalized);
  if (v.reason == reason::ip_literal) {
    return Error::invalid("The allowed host '" + shown +
                          "' is an IP address; the proxy only allows host names. Give the name of the server.");
  }
  if (!v.ok()) {
    return Error::invalid("The allowed host '" + shown +
                          "' is not a plain host name (letters, digits, '-' and '.'; give international "
                          "names in their xn-- form, without scheme, port or path).");
  }
  return normalized;
}

namespace {

struct V4Range {
  std::uint32_t base;
  int bits;
  AddressClass cls;
};

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) { return a << 24 | b << 16 | c << 8 | d; }

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
  const auto zero_prefix = [&](std::size_t n) { return std::all_of(b.begin(), b.begin() + static_cast<long>(n), [](unsigned char x) { return x == 0; }); };
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
    case AddressClass::global: return "global";
    case AddressClass::unspecified: return "unspecified";
    case AddressClass::loopback: return "loopback";
    case AddressClass::private_use: return "private";
    case AddressClass::link_local: return "link-local";
    case AddressClass::unique_local: return "unique-local";
    case AddressClass::v4_mapped: return "ipv4-in-ipv6";
    case AddressClass::multicast: return "multicast";
    case AddressClass::reserved: return "reserved";
  }
  return "unknown";
}

}  // namespace px::proxy
