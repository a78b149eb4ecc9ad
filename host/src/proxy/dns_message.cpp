#include "proxy/dns_message.hpp"

#include "common/host_rule.hpp"
#include "proxy/destination.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy::dns {
namespace {

constexpr std::size_t kHeader = 12;
constexpr std::size_t kMaxName = 255;  // wire bytes, RFC 1035 2.3.4

std::uint16_t be16(std::string_view s, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(s[at]) << 8 |
                                    static_cast<unsigned char>(s[at + 1]));
}
void put16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xffff));
}

// The answer's header: our flags, the query's id and RD, the counts given.
std::string header(const Question& q, Rcode rcode, std::uint16_t questions, std::uint16_t answers) {
  std::string out;
  put16(out, q.id);
  // QR=1, opcode QUERY, AA=1 (the run's names are ours), RD copied, RA=1.
  out += static_cast<char>(0x80 | 0x04 | (q.recursion_desired ? 0x01 : 0));
  out += static_cast<char>(0x80 | static_cast<std::uint8_t>(rcode));
  put16(out, questions);
  put16(out, answers);
  put16(out, 0);
  put16(out, 0);
  return out;
}

}  // namespace

std::string_view to_string(Rcode rcode) {
  switch (rcode) {
    case Rcode::noerror:
      return "NOERROR";
    case Rcode::formerr:
      return "FORMERR";
    case Rcode::servfail:
      return "SERVFAIL";
    case Rcode::nxdomain:
      return "NXDOMAIN";
    case Rcode::notimp:
      return "NOTIMP";
    case Rcode::refused:
      return "REFUSED";
  }
  return "?";
}

std::string type_name(std::uint16_t type) {
  switch (type) {
    case 1:
      return "A";
    case 2:
      return "NS";
    case 5:
      return "CNAME";
    case 6:
      return "SOA";
    case 12:
      return "PTR";
    case 15:
      return "MX";
    case 16:
      return "TXT";
    case 28:
      return "AAAA";
    case 33:
      return "SRV";
    case 64:
      return "SVCB";
    case 65:
      return "HTTPS";
    case 255:
      return "ANY";
    default:
      return "TYPE" + std::to_string(type);
  }
}

Parsed parse_query(std::string_view p) {
  Parsed out;
  if (p.size() < kHeader) return out;  // not even a header: nothing to answer to
  Question& q = out.question;
  q.id = be16(p, 0);
  const auto flags_hi = static_cast<unsigned char>(p[2]);
  if (flags_hi & 0x80) return out;  // a response, not a query: never answered (no loops)
  q.recursion_desired = (flags_hi & 0x01) != 0;
  const unsigned opcode = (flags_hi >> 3) & 0x0f;
  if (opcode != 0) {
    out.status = ParseStatus::notimp;
    return out;
  }
  out.status = ParseStatus::formerr;
  if (be16(p, 4) != 1 || be16(p, 6) != 0 || be16(p, 8) != 0) return out;  // one question, nothing else
  std::size_t at = kHeader;
  std::string name;
  for (;;) {
    if (at >= p.size()) return out;
    const auto len = static_cast<unsigned char>(p[at]);
    if (len == 0) {
      ++at;
      break;
    }
    if (len > 63) return out;  // a compression pointer or a reserved label type
    if (at + 1 + len > p.size() || at + 1 + len - kHeader > kMaxName) return out;
    const std::string_view label = p.substr(at + 1, len);
    // A '.' inside a label would read as two labels once joined.
    if (label.find('.') != std::string_view::npos) return out;
    if (!name.empty()) name += '.';
    name.append(label);
    at += 1 + len;
  }
  if (at + 4 > p.size()) return out;
  q.name = std::move(name);
  q.type = be16(p, at);
  q.klass = be16(p, at + 2);
  q.question_bytes = p.substr(kHeader, at + 4 - kHeader);
  // EDNS: the first additional record is an OPT (root name, type 41). Only
  // noted, so that an answer may carry one back; nothing in it is used.
  const std::size_t opt = at + 4;
  q.edns = be16(p, 10) >= 1 && p.size() >= opt + 11 && p[opt] == '\0' && be16(p, opt + 1) == 41;
  out.status = ParseStatus::ok;
  return out;
}

Decision decide(const ProxyConfig& config, const Question& q,
                const std::function<std::vector<std::uint16_t>(std::string_view)>& ports) {
  Decision d;
  if (q.klass != kClassIN) {
    d.reason = reason::dns_type_refused;
    return d;
  }
  const Verdict v = check_host_name(q.name, d.name);
  if (!v.ok()) {
    // Not a host name (empty, '_', raw bytes, an address): nothing to look up.
    d.reason = v.reason;
    return d;
  }
  const bool address_query = q.type == kTypeA || q.type == kTypeAAAA;
  if (d.name == "localhost" || host_rule_matches(d.name, "*.localhost")) {
    d.kind = address_query ? Decision::Kind::loopback : Decision::Kind::refuse;
    d.rcode = address_query ? Rcode::noerror : Rcode::refused;
    d.reason = address_query ? reason::allowed : reason::dns_type_refused;
    return d;
  }
  const std::vector<std::uint16_t> reachable = ports(d.name);
  if (reachable.empty()) {
    // Outside the rule: the name ends here, never looked up anywhere.
    d.rcode = Rcode::nxdomain;
    d.reason = config.mode == NetworkMode::offline ? reason::offline : reason::not_allowed;
    d.by_rule = true;
    return d;
  }
  if (!address_query) {
    d.reason = reason::dns_type_refused;
    return d;
  }
  d.kind = Decision::Kind::synthetic;
  d.rcode = Rcode::noerror;
  // Reachable only because ask mode will ask about its connection.
  d.reason = config.ask_timeout.count() > 0 && allowed_ports_for(config, d.name).empty()
                 ? reason::ask_on_connect
                 : reason::allowed;
  return d;
}

std::string answer(const Question& q, const std::vector<boost::asio::ip::address>& addresses,
                   std::uint32_t ttl) {
  std::vector<boost::asio::ip::address> records;
  for (const auto& a : addresses)
    if ((q.type == kTypeA && a.is_v4()) || (q.type == kTypeAAAA && a.is_v6())) records.push_back(a);
  std::string out = header(q, Rcode::noerror, 1, static_cast<std::uint16_t>(records.size()));
  out.append(q.question_bytes);
  for (const auto& a : records) {
    put16(out, 0xc00c);  // the name: a pointer to the question's
    put16(out, q.type);
    put16(out, kClassIN);
    put32(out, ttl);
    if (a.is_v4()) {
      const auto b = a.to_v4().to_bytes();
      put16(out, static_cast<std::uint16_t>(b.size()));
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
    } else {
      const auto b = a.to_v6().to_bytes();
      put16(out, static_cast<std::uint16_t>(b.size()));
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
    }
  }
  return out;
}

std::string error(const Question& q, Rcode rcode, std::string_view why) {
  const bool echo = !q.question_bytes.empty();
  std::string out = header(q, rcode, echo ? 1 : 0, 0);
  if (echo) out.append(q.question_bytes);
  if (!q.edns) return out;
  // An OPT record (RFC 6891): root name, type 41, our payload size, extended
  // rcode, version and flags 0; then the extended error, if any.
  constexpr std::uint16_t kTypeOpt = 41;
  constexpr std::uint16_t kOptionExtendedError = 15;
  constexpr std::uint16_t kInfoBlocked = 15;
  constexpr std::uint16_t kPayload = 1232;
  constexpr std::size_t kMaxText = 400;
  const std::string_view text = why.substr(0, kMaxText);
  out[11] = 1;  // ARCOUNT
  out += '\0';
  put16(out, kTypeOpt);
  put16(out, kPayload);
  put32(out, 0);
  if (why.empty()) {
    put16(out, 0);
    return out;
  }
  put16(out, static_cast<std::uint16_t>(4 + 2 + text.size()));
  put16(out, kOptionExtendedError);
  put16(out, static_cast<std::uint16_t>(2 + text.size()));
  put16(out, kInfoBlocked);
  out.append(text);
  return out;
}

}  // namespace px::proxy::dns
