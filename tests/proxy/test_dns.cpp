// The run's DNS as pure functions (parse, decide, answer), the synthetic
// address table, the host ports Local servers mirrors, and the test hook of
// the resolver: every answer a program inside a run can get.
#include <gtest/gtest.h>

#include "proxy/destination.hpp"
#include "proxy/dns_message.hpp"
#include "proxy/local_ports.hpp"
#include "proxy/reasons.hpp"
#include "proxy/synthetic_names.hpp"
#include "proxy/test_resolver.hpp"

namespace px::proxy::test {
namespace {

// The run's own rule, with no live change: what ServerCore::ports_for gives then.
std::function<std::vector<std::uint16_t>(std::string_view)> ports_of(const ProxyConfig& cfg) {
  return [&cfg](std::string_view name) { return allowed_ports_for(cfg, name); };
}

using boost::asio::ip::make_address;

std::string query(std::uint16_t id, const std::string& name, std::uint16_t type, std::uint16_t klass = 1,
                  std::uint8_t flags_hi = 0x01) {
  std::string q;
  q += static_cast<char>(id >> 8);
  q += static_cast<char>(id & 0xff);
  q += static_cast<char>(flags_hi);
  q += '\0';
  q += std::string("\0\1\0\0\0\0\0\0", 8);
  std::size_t start = 0;
  while (start <= name.size() && !name.empty()) {
    const std::size_t dot = name.find('.', start);
    const std::string label = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    q += static_cast<char>(label.size());
    q += label;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  q += '\0';
  q += static_cast<char>(type >> 8);
  q += static_cast<char>(type & 0xff);
  q += static_cast<char>(klass >> 8);
  q += static_cast<char>(klass & 0xff);
  return q;
}

ProxyConfig allowlist(std::vector<std::string> hosts) {
  ProxyConfig c;
  c.mode = NetworkMode::allowlist;
  c.password = "0123456789abcdef0123456789abcdef";
  c.allowed_hosts = std::move(hosts);
  return validate(c).value();
}

int rcode_of(const std::string& answer) {
  return static_cast<unsigned char>(answer[3]) & 0x0f;
}
int answers_of(const std::string& answer) {
  return static_cast<unsigned char>(answer[6]) << 8 | static_cast<unsigned char>(answer[7]);
}

TEST(Dns, AllowedNamesGetSyntheticAddressesOthersNxdomainNeverLookedUp) {
  const ProxyConfig cfg = allowlist({"allowed.test", "db.test:5432"});
  for (const char* name : {"allowed.test", "API.Allowed.test", "db.test"}) {
    const std::string q = query(7, name, dns::kTypeA);
    const auto parsed = dns::parse_query(q);
    ASSERT_EQ(parsed.status, dns::ParseStatus::ok) << name;
    const auto d = dns::decide(cfg, parsed.question, ports_of(cfg));
    EXPECT_EQ(d.kind, dns::Decision::Kind::synthetic) << name;
  }
  const std::string q = query(9, "x7f3a9b2c.exfil.evil.test", dns::kTypeA);
  const auto parsed = dns::parse_query(q);
  const auto d = dns::decide(cfg, parsed.question, ports_of(cfg));
  EXPECT_EQ(d.kind, dns::Decision::Kind::refuse);
  EXPECT_EQ(d.rcode, dns::Rcode::nxdomain);
  EXPECT_EQ(d.reason, reason::not_allowed);
  EXPECT_TRUE(d.by_rule);
  const std::string a = dns::error(parsed.question, d.rcode);
  EXPECT_EQ(a.substr(0, 2), q.substr(0, 2)) << "the query's id";
  EXPECT_EQ(rcode_of(a), 3);
  EXPECT_EQ(answers_of(a), 0);
}

TEST(Dns, OtherTypesClassesAndNonNamesAreRefused) {
  const ProxyConfig cfg = allowlist({"allowed.test"});
  const auto decide = [&](const std::string& q) {
    return dns::decide(cfg, dns::parse_query(q).question, ports_of(cfg));
  };
  EXPECT_EQ(decide(query(1, "allowed.test", 16)).reason, reason::dns_type_refused);    // TXT
  EXPECT_EQ(decide(query(1, "allowed.test", 15)).reason, reason::dns_type_refused);    // MX
  EXPECT_EQ(decide(query(1, "allowed.test", 1, 3)).reason, reason::dns_type_refused);  // class CHAOS
  EXPECT_EQ(decide(query(1, "_sip._tcp.allowed.test", 33)).reason, reason::bad_host);
  EXPECT_EQ(decide(query(1, "1.2.3.4", 1)).reason, reason::ip_literal);
  EXPECT_EQ(decide(query(1, "", 1)).reason, reason::bad_host);
  const auto local = decide(query(1, "localhost", dns::kTypeAAAA));
  EXPECT_EQ(local.kind, dns::Decision::Kind::loopback);
  EXPECT_EQ(decide(query(1, "app.localhost", 1)).kind, dns::Decision::Kind::loopback);
}

TEST(Dns, AnswersCarryTheRecordsOfTheQuestionsType) {
  const std::string q = query(0xbeef, "allowed.test", dns::kTypeAAAA);
  const auto parsed = dns::parse_query(q);
  const std::string a =
      dns::answer(parsed.question, {make_address("198.18.0.1"), make_address("fd00::1")}, 60);
  EXPECT_EQ(answers_of(a), 1);
  EXPECT_EQ(rcode_of(a), 0);
  EXPECT_EQ(static_cast<unsigned char>(a[2]) & 0x80, 0x80) << "QR";
  EXPECT_EQ(a.size(), q.size() + 2 + 2 + 2 + 4 + 2 + 16);
  EXPECT_EQ(a.substr(a.size() - 16), std::string("\xfd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16));
}

TEST(Dns, WhatIsNotAQueryIsNotAnsweredOrAnsweredFormerr) {
  EXPECT_EQ(dns::parse_query("").status, dns::ParseStatus::not_dns);
  EXPECT_EQ(dns::parse_query(std::string(11, '\xff')).status, dns::ParseStatus::not_dns);
  EXPECT_EQ(dns::parse_query(query(1, "a.test", 1, 1, 0x81)).status, dns::ParseStatus::not_dns)
      << "a response";
  EXPECT_EQ(dns::parse_query(query(1, "a.test", 1, 1, 0x01 | (5 << 3))).status, dns::ParseStatus::notimp);
  std::string truncated = query(1, "a.test", 1);
  truncated.resize(truncated.size() - 3);
  EXPECT_EQ(dns::parse_query(truncated).status, dns::ParseStatus::formerr);
  std::string pointer = query(1, "a.test", 1);
  pointer[12] = static_cast<char>(0xc0);
  EXPECT_EQ(dns::parse_query(pointer).status, dns::ParseStatus::formerr);
  std::string two = query(1, "a.test", 1);
  two[5] = 2;  // two questions
  EXPECT_EQ(dns::parse_query(two).status, dns::ParseStatus::formerr);
  std::string dotted = query(1, "ab.test", 1);
  dotted[13] = '.';  // a '.' inside a label
  EXPECT_EQ(dns::parse_query(dotted).status, dns::ParseStatus::formerr);
  const auto formerr = dns::parse_query(truncated);
  EXPECT_EQ(rcode_of(dns::error(formerr.question, dns::Rcode::formerr)), 1);
}

TEST(SyntheticNames, SameNameSameAddressesAndBack) {
  SyntheticRanges r;
  r.v6_prefix = make_address("fd12:3456:789a::").to_v6();
  SyntheticNames names(r, 3);
  const auto* a = names.allocate("a.test");
  const auto* b = names.allocate("b.test");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->v4.to_string(), "198.18.0.1");
  EXPECT_EQ(a->v6->to_string(), "fd12:3456:789a::1");
  EXPECT_EQ(b->v4.to_string(), "198.18.0.2");
  EXPECT_EQ(names.allocate("a.test"), a);
  EXPECT_EQ(names.by_address(make_address("198.18.0.2"))->name, "b.test");
  EXPECT_EQ(names.by_address(make_address("fd12:3456:789a::1"))->name, "a.test");
  EXPECT_EQ(names.by_address(make_address("198.18.0.3")), nullptr) << "not handed out";
  EXPECT_EQ(names.by_address(make_address("198.18.0.0")), nullptr);
  EXPECT_EQ(names.by_address(make_address("10.0.0.1")), nullptr);
  EXPECT_EQ(names.by_address(make_address("fd12:3456:789a:0:1::1")), nullptr);
  EXPECT_TRUE(names.in_ranges(make_address("198.19.255.254")));
  EXPECT_FALSE(names.in_ranges(make_address("198.20.0.1")));
  ASSERT_NE(names.allocate("c.test"), nullptr);
  EXPECT_EQ(names.allocate("d.test"), nullptr) << "full at its capacity";
}

TEST(LocalPorts, ListeningLoopbackPortsFromProcNetTcp) {
  const std::string v4 =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n"
      "   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2\n"
      "   2: 0A00020F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3\n"
      "   3: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4\n";
  EXPECT_EQ(listening_loopback_ports(v4, false), (std::set<std::uint16_t>{22, 8080}));
  const std::string v6 =
      "  sl  local_address                         remote_address                        st\n"
      "   0: 00000000000000000000000001000000:1538 00000000000000000000000000000000:0000 0A\n"
      "   1: 0000000000000000FFFF00000100007F:0BB8 00000000000000000000000000000000:0000 0A\n"
      "   2: 20010DB8000000000000000000000001:0050 00000000000000000000000000000000:0000 0A\n";
  EXPECT_EQ(listening_loopback_ports(v6, true), (std::set<std::uint16_t>{5432, 3000}));
}

TEST(TestResolver, OnlyTestNamesToLoopback) {
  std::string problems;
  const auto map =
      parse_test_resolve("a.test=127.0.0.1,b.test=::1,evil.com=127.0.0.1,c.test=10.0.0.1,junk", problems);
  ASSERT_EQ(map.size(), 2u);
  EXPECT_EQ(map[0].first, "a.test");
  EXPECT_EQ(map[1].second.to_string(), "::1");
  EXPECT_NE(problems.find("evil.com"), std::string::npos);
  EXPECT_NE(problems.find("c.test=10.0.0.1"), std::string::npos);
  EXPECT_NE(problems.find("junk"), std::string::npos);
}

}  // namespace
}  // namespace px::proxy::test

namespace px::proxy::test {
namespace {

// The query with an EDNS OPT record (as dig and many stub resolvers send).
std::string with_opt(std::string q) {
  q[11] = 1;                                             // ARCOUNT
  q += std::string("\0\0\x29\x04\xd0\0\0\0\0\0\0", 11);  // root, OPT, 1232, ttl 0, rdlen 0
  return q;
}

TEST(DnsExtendedError, ARefusedNameCarriesItsReasonWhenTheQueryHasEdns) {
  const std::string packet = with_opt(query(7, "outside.example", dns::kTypeA));
  const auto parsed = dns::parse_query(packet);
  ASSERT_EQ(parsed.status, dns::ParseStatus::ok);
  EXPECT_TRUE(parsed.question.edns);
  const std::string why = "parallex proxy: outside.example is outside this run's network rule.";
  const std::string answer = dns::error(parsed.question, dns::Rcode::nxdomain, why);
  // ARCOUNT 1, and the OPT record's option: code 15 (extended error), info 15 (Blocked), the text.
  EXPECT_EQ(static_cast<unsigned char>(answer[11]), 1u);
  const std::string option = std::string("\0\x0f", 2) + static_cast<char>(0) +
                             static_cast<char>(2 + why.size()) + std::string("\0\x0f", 2) + why;
  EXPECT_NE(answer.find(option), std::string::npos);
  EXPECT_EQ(answer.substr(answer.size() - why.size()), why);
  EXPECT_EQ(static_cast<unsigned char>(answer[3]) & 0x0f, 3u);  // NXDOMAIN
}

TEST(DnsExtendedError, AQueryWithoutEdnsGetsNoOptRecord) {
  const std::string packet = query(7, "outside.example", dns::kTypeA);
  const auto parsed = dns::parse_query(packet);
  ASSERT_EQ(parsed.status, dns::ParseStatus::ok);
  EXPECT_FALSE(parsed.question.edns);
  const std::string answer = dns::error(parsed.question, dns::Rcode::nxdomain, "why");
  EXPECT_EQ(static_cast<unsigned char>(answer[11]), 0u);
  EXPECT_EQ(answer, dns::error(parsed.question, dns::Rcode::nxdomain));
}

TEST(DnsAskMode, ANameOutsideTheRuleIsAnsweredSoItsConnectionCanBeAsked) {
  ProxyConfig cfg;
  cfg.mode = NetworkMode::allowlist;
  cfg.allowed_hosts = {"allowed.test"};
  cfg.password = std::string(16, 'p');
  cfg.ask_timeout = std::chrono::seconds(30);
  cfg = validate(cfg).value();
  // What ServerCore::capture_ports_for gives in ask mode: the network's ports.
  const auto ports = [&](std::string_view name) {
    auto p = allowed_ports_for(cfg, name);
    return p.empty() ? cfg.allowed_ports : p;
  };
  const auto asked =
      dns::decide(cfg, dns::parse_query(query(1, "outside.example", dns::kTypeA)).question, ports);
  EXPECT_EQ(asked.kind, dns::Decision::Kind::synthetic);
  EXPECT_EQ(asked.reason, reason::ask_on_connect);
  const auto allowed =
      dns::decide(cfg, dns::parse_query(query(1, "allowed.test", dns::kTypeA)).question, ports);
  EXPECT_EQ(allowed.reason, reason::allowed);
}

}  // namespace
}  // namespace px::proxy::test
