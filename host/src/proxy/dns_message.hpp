#pragma once
// The run's DNS, as pure functions: a query's bytes in, the answer's bytes out.
// Strict: one question of class IN in a standard query, no name compression in
// the question, labels that make a plain host name. Anything else is answered
// FORMERR / NOTIMP (or dropped when it is not even a DNS header), never
// forwarded. Fuzzed (fuzz/proxy_dns.cpp).
#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/host_rules.hpp"
#include "proxy/proxy.hpp"

namespace px::proxy::dns {

inline constexpr std::uint16_t kTypeA = 1;
inline constexpr std::uint16_t kTypeAAAA = 28;
inline constexpr std::uint16_t kClassIN = 1;

enum class Rcode : std::uint8_t {
  noerror = 0,
  formerr = 1,
  servfail = 2,
  nxdomain = 3,
  notimp = 4,
  refused = 5
};
std::string_view to_string(Rcode rcode);
// "A", "AAAA", "TXT", ... or "TYPE<n>".
std::string type_name(std::uint16_t type);

struct Question {
  std::uint16_t id = 0;
  bool recursion_desired = false;
  std::string name;  // the labels joined with '.', as received (not yet checked)
  std::uint16_t type = 0;
  std::uint16_t klass = 0;
  std::string_view question_bytes;  // the question section, echoed in the answer (points into the query)
  bool edns = false;                // an OPT record follows the question (RFC 6891): the answer may carry one
};

enum class ParseStatus {
  ok,
  not_dns,  // shorter than a header, or a response: dropped without an answer
  formerr,  // a header, but the question cannot be read
  notimp,   // another opcode (NOTIFY, UPDATE, ...)
};

struct Parsed {
  ParseStatus status = ParseStatus::not_dns;
  Question question;  // id and flags are set for formerr and notimp too
};

// Reads a query. The question's bytes point into `packet`.
Parsed parse_query(std::string_view packet);

// What to answer, decided by the run's network rule (the same host rule and
// ports as every other way out, destination.hpp).
struct Decision {
  enum class Kind { synthetic, loopback, refuse } kind = Kind::refuse;
  Rcode rcode = Rcode::refused;
  std::string_view reason;  // reasons.hpp
  std::string name;         // normalized
  bool by_rule = false;     // refused by the network rule: listed at the end of the run
};
// `ports`: where the name may go now (ServerCore::capture_ports_for); empty:
// outside the rule. `asked`: in ask mode a name outside the rule is answered
// all the same (reason ask-on-connect) and its connection asked about.
Decision decide(const ProxyConfig& config, const Question& question,
                const std::function<std::vector<std::uint16_t>(std::string_view)>& ports);

// NOERROR with one record per address of the question's type (none: NODATA).
std::string answer(const Question& question, const std::vector<boost::asio::ip::address>& addresses,
                   std::uint32_t ttl);
// An answer with no record and `rcode`; `question` may come from a formerr
// or notimp parse (its id and flags only). When the query had an EDNS OPT
// record and `why` is given, the answer carries it as an extended DNS error
// (RFC 8914, info-code 15 "Blocked", EXTRA-TEXT `why`, cut to 400 bytes).
std::string error(const Question& question, Rcode rcode, std::string_view why = {});

}  // namespace px::proxy::dns
