// libFuzzer target over everything a sealed run can send its own DNS, and
// what the proxy reads from the seal's init and from rules: the query parser,
// the decision by the rule, the answers built from it, the socket channel's
// messages and the host-rule parser.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/host_rule.hpp"
#include "common/socket_request.hpp"
#include "proxy/destination.hpp"
#include "proxy/dns_message.hpp"

namespace {

const px::proxy::ProxyConfig& config() {
  static const px::proxy::ProxyConfig c = [] {
    px::proxy::ProxyConfig v;
    v.mode = px::proxy::NetworkMode::allowlist;
    v.password = "0123456789abcdef0123456789abcdef";
    v.allowed_hosts = {"allowed.test", "*.wild.test:5432", "ssh.test:22"};
    return px::proxy::validate(v).value();
  }();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace px::proxy;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const dns::Parsed parsed = dns::parse_query(input);
  if (parsed.status == dns::ParseStatus::ok) {
    const auto& q = parsed.question;
    // The echoed question lies inside the query.
    if (q.question_bytes.data() < input.data() ||
        q.question_bytes.data() + q.question_bytes.size() > input.data() + size)
      __builtin_trap();
    const dns::Decision d = dns::decide(
        config(), q, [](std::string_view n) { return px::proxy::allowed_ports_for(config(), n); });
    if (d.kind == dns::Decision::Kind::synthetic && d.name.empty()) __builtin_trap();
    const std::string a = dns::answer(
        q, {boost::asio::ip::make_address("198.18.0.1"), boost::asio::ip::make_address("fd00::1")}, 60);
    if (a.size() < 12 || a[0] != input[0] || a[1] != input[1]) __builtin_trap();
    const std::string e = dns::error(q, d.rcode);
    if (e.size() < 12 || (static_cast<unsigned char>(e[3]) & 0x0f) != static_cast<unsigned>(d.rcode))
      __builtin_trap();
  } else if (parsed.status != dns::ParseStatus::not_dns) {
    if (dns::error(parsed.question, dns::Rcode::formerr).size() < 12) __builtin_trap();
  }

  // The socket channel's messages (what the init reads, what the proxy reads back).
  if (const auto r = px::netns::decode_request(input)) {
    const auto again = px::netns::decode_request(px::netns::encode(*r));
    if (!again || again->endpoints.size() != r->endpoints.size() || again->id != r->id) __builtin_trap();
  }
  (void)px::netns::decode_reply(input);

  // The bytes as a host rule: what is accepted reads back the same.
  if (const auto rule = px::parse_host_rule(input)) {
    const auto again = px::parse_host_rule(rule.value().text());
    if (!again || again.value().text() != rule.value().text()) __builtin_trap();
  }
  return 0;
}
