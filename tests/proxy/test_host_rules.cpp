// The host rule as pure functions: every spelling from escape-list (b).
#include <gtest/gtest.h>

#include "proxy/host_rules.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy {
namespace {

struct HostCase {
  const char* input;
  int status;
  std::string_view reason;
  const char* normalized;
};

class HostName : public ::testing::TestWithParam<HostCase> {};

TEST_P(HostName, IsCheckedAndNormalized) {
  const auto& c = GetParam();
  std::string normalized;
  const Verdict v = check_host_name(c.input, normalized);
  EXPECT_EQ(v.status, c.status) << c.input;
  EXPECT_EQ(v.reason, c.reason) << c.input;
  if (c.status == 0) {
    EXPECT_EQ(normalized, c.normalized);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EscapeList, HostName,
    ::testing::Values(
        HostCase{"github.com", 0, {}, "github.com"}, HostCase{"github.com.", 0, {}, "github.com"},
        HostCase{"GitHub.COM", 0, {}, "github.com"}, HostCase{"xn--gthub-zsa.com", 0, {}, "xn--gthub-zsa.com"},
        HostCase{"a-b.c0.io", 0, {}, "a-b.c0.io"}, HostCase{"localhost", 0, {}, "localhost"},
        HostCase{"github.com..", 400, reason::bad_host, ""}, HostCase{".github.com", 400, reason::bad_host, ""},
        HostCase{"a..b", 400, reason::bad_host, ""}, HostCase{"", 400, reason::bad_host, ""},
        HostCase{".", 400, reason::bad_host, ""}, HostCase{"g\xc3\xadthub.com", 400, reason::bad_host, ""},
        HostCase{"%67ithub.com", 400, reason::bad_host, ""}, HostCase{"a_b.com", 400, reason::bad_host, ""},
        HostCase{"*.allowed.com", 400, reason::bad_host, ""}, HostCase{"-a.com", 400, reason::bad_host, ""},
        HostCase{"a-.com", 400, reason::bad_host, ""}, HostCase{"allowed.com\\", 400, reason::bad_host, ""},
        HostCase{"allowed.com@evil.com", 400, reason::userinfo, ""},
        HostCase{"evil\r\nX: y", 400, reason::bad_host, ""},
        HostCase{"1.2.3.4", 403, reason::ip_literal, ""}, HostCase{"2130706433", 403, reason::ip_literal, ""},
        HostCase{"0x7f.1", 403, reason::ip_literal, ""}, HostCase{"0x7F000001", 403, reason::ip_literal, ""},
        HostCase{"0177.0.0.1", 403, reason::ip_literal, ""}, HostCase{"127.1", 403, reason::ip_literal, ""},
        HostCase{"0.0.0.0", 403, reason::ip_literal, ""}, HostCase{"127.0.0.1.", 403, reason::ip_literal, ""},
        HostCase{"[::1]", 403, reason::ip_literal, ""}, HostCase{"[::ffff:127.0.0.1]", 403, reason::ip_literal, ""},
        HostCase{"[fe80::1%eth0]", 403, reason::ip_literal, ""}, HostCase{"::1", 403, reason::ip_literal, ""},
        HostCase{"[::1", 400, reason::bad_host, ""}, HostCase{"[example.com]", 400, reason::bad_host, ""},
        HostCase{"[<b>]", 400, reason::bad_host, ""}, HostCase{"[]", 400, reason::bad_host, ""},
        HostCase{"[::1%]", 400, reason::bad_host, ""}, HostCase{"[::1%a b]", 400, reason::bad_host, ""}));

TEST(HostName, LengthLimits) {
  std::string n;
  EXPECT_TRUE(check_host_name(std::string(63, 'a') + ".com", n).ok());
  EXPECT_EQ(check_host_name(std::string(64, 'a') + ".com", n).status, 400);
  std::string long_name;
  for (int i = 0; i < 60; ++i) long_name += "abcd.";
  EXPECT_EQ(check_host_name(long_name + "com", n).status, 400);
}

struct AuthorityCase {
  const char* input;
  bool port_required;
  int status;
  std::string_view reason;
  const char* host;
  std::uint16_t port;
};

class Authority : public ::testing::TestWithParam<AuthorityCase> {};

TEST_P(Authority, IsParsed) {
  const auto& c = GetParam();
  HostPort hp;
  const Verdict v = parse_authority(c.input, c.port_required, 80, hp);
  EXPECT_EQ(v.status, c.status) << c.input;
  EXPECT_EQ(v.reason, c.reason) << c.input;
  if (c.status == 0) {
    EXPECT_EQ(hp.host, c.host);
    EXPECT_EQ(hp.port, c.port);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EscapeList, Authority,
    ::testing::Values(AuthorityCase{"example.com:443", true, 0, {}, "example.com", 443},
                      AuthorityCase{"example.com", false, 0, {}, "example.com", 80},
                      AuthorityCase{"Example.com.:8080", true, 0, {}, "example.com", 8080},
                      AuthorityCase{"example.com:65535", true, 0, {}, "example.com", 65535},
                      AuthorityCase{"example.com", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:0", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:65536", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:+443", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:0443", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:443:80", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:44 3", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"example.com:999999", true, 400, reason::bad_port, "", 0},
                      AuthorityCase{"allowed.com@evil.com:443", true, 400, reason::userinfo, "", 0},
                      AuthorityCase{"[::1]:443", true, 403, reason::ip_literal, "", 0},
                      AuthorityCase{"[::1]x", true, 400, reason::bad_host, "", 0},
                      AuthorityCase{"::1:443", true, 403, reason::ip_literal, "", 0},
                      AuthorityCase{"127.0.0.1:22", true, 403, reason::ip_literal, "", 0},
                      AuthorityCase{":443", true, 400, reason::bad_host, "", 0}));

TEST(HostMatch, LabelBoundariesOnly) {
  EXPECT_TRUE(host_matches("allowed.com", "allowed.com"));
  EXPECT_TRUE(host_matches("api.allowed.com", "allowed.com"));
  EXPECT_TRUE(host_matches("a.b.allowed.com", "allowed.com"));
  EXPECT_FALSE(host_matches("evilallowed.com", "allowed.com"));
  EXPECT_FALSE(host_matches("allowed.com.evil.com", "allowed.com"));
  EXPECT_FALSE(host_matches("allowed.co", "allowed.com"));
  EXPECT_FALSE(host_matches("com", "allowed.com"));
  EXPECT_FALSE(host_matches("anything", ""));
  // "*.x" is its subdomains only.
  EXPECT_TRUE(host_matches("api.allowed.com", "*.allowed.com"));
  EXPECT_FALSE(host_matches("allowed.com", "*.allowed.com"));
  EXPECT_FALSE(host_matches("evilallowed.com", "*.allowed.com"));
}

TEST(AddressClass, RefusesEveryLocalRange) {
  using boost::asio::ip::make_address;
  const std::pair<const char*, AddressClass> cases[] = {
      {"93.184.216.34", AddressClass::global},      {"2606:2800:220:1::1", AddressClass::global},
      {"127.0.0.1", AddressClass::loopback},         {"127.255.0.9", AddressClass::loopback},
      {"::1", AddressClass::loopback},               {"0.0.0.0", AddressClass::unspecified},
      {"::", AddressClass::unspecified},             {"0.1.2.3", AddressClass::reserved},
      {"10.1.2.3", AddressClass::private_use},       {"172.16.0.1", AddressClass::private_use},
      {"172.31.255.255", AddressClass::private_use}, {"172.32.0.1", AddressClass::global},
      {"192.168.1.1", AddressClass::private_use},    {"100.64.0.1", AddressClass::private_use},
      {"169.254.169.254", AddressClass::link_local}, {"fe80::1", AddressClass::link_local},
      {"fd00::1", AddressClass::unique_local},       {"fc00::1", AddressClass::unique_local},
      {"::ffff:127.0.0.1", AddressClass::v4_mapped}, {"::ffff:8.8.8.8", AddressClass::v4_mapped},
      {"64:ff9b::a00:1", AddressClass::v4_mapped},   {"224.0.0.1", AddressClass::multicast},
      {"ff02::1", AddressClass::multicast},          {"255.255.255.255", AddressClass::reserved},
      {"240.0.0.1", AddressClass::reserved},         {"198.18.0.1", AddressClass::reserved},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(classify(make_address(text)), expected) << text;
  }
}

}  // namespace
}  // namespace px::proxy
