// The one host-rule syntax (common/host_rule.hpp), given by flags, profiles,
// agent.yaml, workspaces and the proxy alike: what it takes, what it refuses
// and that every refusal names the input and the fix.
#include "common/host_rule.hpp"

#include <gtest/gtest.h>

namespace px {
namespace {

TEST(HostRule, PlainWildcardAndPort) {
  auto plain = parse_host_rule("GitHub.com.");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain.value().pattern, "github.com");
  EXPECT_FALSE(plain.value().port);
  EXPECT_EQ(plain.value().text(), "github.com");

  auto ssh = parse_host_rule("github.com:22");
  ASSERT_TRUE(ssh) << ssh.error().message;
  EXPECT_EQ(ssh.value().pattern, "github.com");
  EXPECT_EQ(*ssh.value().port, 22);
  EXPECT_EQ(ssh.value().text(), "github.com:22");

  auto db = parse_host_rule("*.Internal.Example:5432");
  ASSERT_TRUE(db) << db.error().message;
  EXPECT_EQ(db.value().pattern, "*.internal.example");
  EXPECT_EQ(*db.value().port, 5432);
  EXPECT_EQ(parse_host_rule("a.b:65535").value().port, 65535);
}

struct Refused {
  const char* input;
  const char* says;  // a word of the fix the message must name
};

class HostRuleRefuses : public ::testing::TestWithParam<Refused> {};

TEST_P(HostRuleRefuses, NamesTheInputAndTheFix) {
  const auto& c = GetParam();
  auto r = parse_host_rule(c.input);
  ASSERT_FALSE(r) << c.input << " was accepted as " << r.value().text();
  if (*c.input) {
    EXPECT_NE(r.error().message.find(std::string("'") + c.input + "'"), std::string::npos)
        << r.error().message;
  }
  EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    BadRules, HostRuleRefuses,
    ::testing::Values(
        Refused{"", "github.com"}, Refused{"github.com:0", "between 1 and 65535"},
        Refused{"github.com:65536", "between 1 and 65535"},
        Refused{"github.com:99999999999", "between 1 and 65535"}, Refused{"github.com:022", "leading zero"},
        Refused{"github.com:22-25", "one port per rule"}, Refused{"github.com:22,23", "one port per rule"},
        Refused{"github.com:ssh", "not a number"}, Refused{"github.com:", "no port"},
        Refused{"github.com:22:23", "one port per rule"}, Refused{"https://github.com", "scheme"},
        Refused{"ssh://github.com:22", "scheme"}, Refused{"github.com/o/r", "path"},
        Refused{"git@github.com", "user part"}, Refused{"10.0.0.1", "IP address"},
        Refused{"10.0.0.1:22", "IP address"}, Refused{"[::1]:22", "IP address"},
        Refused{"fe80::1", "IP address"}, Refused{"0x7f.1", "IP address"},
        Refused{"a.*.example.com", "wildcard"}, Refused{"*example.com", "wildcard"},
        Refused{"exa_mple.com", "plain host name"}, Refused{"g\xc3\xadthub.com", "xn--"},
        Refused{"com", "public suffix"}, Refused{"*.com", "public suffix"}, Refused{"co.uk", "public suffix"},
        Refused{"*.co.uk:443", "public suffix"}, Refused{"github.io", "public suffix"},
        Refused{"localhost", "public suffix"}));

TEST(HostRule, PublicSuffixesAreRefusedButNamesUnderThemAreNot) {
  EXPECT_TRUE(is_public_suffix("com"));
  EXPECT_TRUE(is_public_suffix("co.uk"));
  EXPECT_TRUE(is_public_suffix("githubusercontent.com"));
  EXPECT_FALSE(is_public_suffix("github.com"));
  EXPECT_TRUE(parse_host_rule("example.co.uk"));
  EXPECT_TRUE(parse_host_rule("objects.githubusercontent.com"));
  EXPECT_FALSE(parse_host_rule("*.github.io"));
  EXPECT_TRUE(parse_host_rule("o.github.io"));
}

TEST(HostRule, Matching) {
  EXPECT_TRUE(host_rule_matches("github.com", "github.com"));
  EXPECT_TRUE(host_rule_matches("api.github.com", "github.com"));
  EXPECT_FALSE(host_rule_matches("evilgithub.com", "github.com"));
  EXPECT_TRUE(host_rule_matches("api.github.com", "*.github.com"));
  EXPECT_FALSE(host_rule_matches("github.com", "*.github.com"));
}

TEST(DnsName, SpellingsOfAddressesAreAddresses) {
  std::string n;
  for (const char* a : {"127.1", "0x7f.1", "2130706433", "0177.0.0.1", "1.2.3.4", "[::1]", "::1", "a.0x1f"})
    EXPECT_EQ(check_dns_name(a, n), NameProblem::ip_literal) << a;
  EXPECT_EQ(check_dns_name("Example.COM.", n), NameProblem::none);
  EXPECT_EQ(n, "example.com");
  EXPECT_EQ(check_dns_name("a..b", n), NameProblem::bad_label);
  EXPECT_EQ(check_dns_name("a_b.c", n), NameProblem::bad_character);
  EXPECT_EQ(check_dns_name("u@h.c", n), NameProblem::userinfo);
}

}  // namespace
}  // namespace px
