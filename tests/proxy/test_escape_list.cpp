// escape-list.md section (b), row by row: raw bytes in, status and reason out,
// and for every refusal: no resolver call, no upstream connection, connection
// closed after the answer.
#include "harness.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy::test {
namespace {

struct Row {
  const char* name;
  std::string bytes;  // {AUTH} = a good Proxy-Authorization line, {ECHO}/{HTTP} = upstream ports
  int status;
  std::string_view reason;  // empty when the request is forwarded
};

std::string expand(std::string s, const std::string& auth, std::uint16_t echo, std::uint16_t http) {
  const std::pair<std::string, std::string> subs[] = {
      {"{AUTH}", auth}, {"{ECHO}", std::to_string(echo)}, {"{HTTP}", std::to_string(http)}};
  for (const auto& [k, v] : subs) {
    for (auto p = s.find(k); p != std::string::npos; p = s.find(k)) s.replace(p, k.size(), v);
  }
  return s;
}

std::string with(const std::string& user, const std::string& pw) {
  return "Proxy-Authorization: " + basic_auth(user, pw) + "\r\n";
}

const std::vector<Row>& rows() {
  using namespace reason;
  static const std::vector<Row> r = {
      // Authentication.
      {"no_auth", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n\r\n", 407, auth_required},
      {"wrong_password", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n" + with("px", "wrong") + "\r\n", 407, auth_failed},
      {"bad_base64", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\nProxy-Authorization: Basic %%%%\r\n\r\n", 407, auth_failed},
      {"empty_user", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n" + with("", kPassword) + "\r\n", 407, auth_failed},
      {"colon_in_password", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n" + with("px", kPassword + ":") + "\r\n", 407, auth_failed},
      {"auth_not_basic", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\nProxy-Authorization: Bearer " + kPassword + "\r\n\r\n", 407, auth_failed},
      {"auth_twice", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n{AUTH}{AUTH}\r\n", 400, duplicate_header},
      // Authority and ports.
      {"no_port", "CONNECT allowed.test HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"port_0", "CONNECT allowed.test:0 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"port_65536", "CONNECT allowed.test:65536 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"port_plus", "CONNECT allowed.test:+443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"port_leading_zero", "CONNECT allowed.test:0443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"two_ports", "CONNECT allowed.test:443:80 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"trailing_space", "CONNECT allowed.test:443 HTTP/1.1 \r\n{AUTH}\r\n", 400, bad_request_line},
      {"port_not_allowed", "CONNECT allowed.test:22 HTTP/1.1\r\n{AUTH}\r\n", 403, port_not_allowed},
      {"plain_port_not_allowed", "GET http://allowed.test:8081/ HTTP/1.1\r\n{AUTH}\r\n", 403, port_not_allowed},
      // Request line.
      {"lowercase_connect", "connect allowed.test:{ECHO} HTTP/1.1\r\n{AUTH}\r\n", 400, bad_method},
      {"connect_with_scheme", "CONNECT http://allowed.test:{ECHO} HTTP/1.1\r\n{AUTH}\r\n", 400, bad_port},
      {"http_0_9", "GET http://allowed.test:{HTTP}/\r\n\r\n", 400, bad_version},
      {"http_2_0", "CONNECT allowed.test:{ECHO} HTTP/2.0\r\n{AUTH}\r\n", 400, bad_version},
      {"bare_lf", "CONNECT allowed.test:{ECHO} HTTP/1.1\n\n", 400, bare_line_feed},
      {"nul", std::string("CONNECT allowed.test:443\0 HTTP/1.1\r\n\r\n", 38), 400, bad_request_line},
      {"obs_fold", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n{AUTH}X: a\r\n b\r\n\r\n", 400, obs_fold},
      {"tab_separators", "CONNECT\tallowed.test:{ECHO}\tHTTP/1.1\r\n{AUTH}\r\n", 400, bad_request_line},
      // Sizes.
      {"request_line_8k", "GET http://allowed.test/" + std::string(8200, 'a') + " HTTP/1.1\r\n{AUTH}\r\n", 414, request_line_too_long},
      {"headers_16k", "GET http://allowed.test/ HTTP/1.1\r\n{AUTH}X: " + std::string(16500, 'v') + "\r\n\r\n", 431, headers_too_large},
      {"fields_101", [] {
         std::string s = "GET http://allowed.test/ HTTP/1.1\r\n{AUTH}";
         for (int i = 0; i < 101; ++i) s += "X" + std::to_string(i) + ": v\r\n";
         return s + "\r\n";
       }(), 431, too_many_headers},
      // Host header.
      {"space_before_colon", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\nHost : x\r\n{AUTH}\r\n", 400, bad_header},
      {"duplicate_host", "GET http://allowed.test:{HTTP}/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n{AUTH}\r\n", 400, duplicate_header},
      {"host_differs_from_connect", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\nHost: evil.test:{ECHO}\r\n{AUTH}\r\n", 400, host_mismatch},
      // IP literals.
      {"ipv4", "CONNECT 1.2.3.4:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      // ([::1] and 127.0.0.1 are this machine: Local servers, on in this table, reaches them; see test_server.)
      {"ipv6_not_loopback", "CONNECT [::2]:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"ipv4_mapped", "CONNECT [::ffff:127.0.0.1]:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"decimal", "CONNECT 2130706433:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"hex", "CONNECT 0x7f.1:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"octal", "CONNECT 0177.0.0.1:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"short", "CONNECT 127.1:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"zero", "CONNECT 0.0.0.0:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"zone", "CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      // Brackets around anything but an IPv6 address are not an address: refused as a bad
      // name, and the refusal's body does not carry what was inside them back.
      {"bracketed_name", "CONNECT [allowed.test]:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"bracketed_markup", "CONNECT [<b>hi</b>]:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"bracketed_bad_zone", "CONNECT [fe80::1%<b>]:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"plain_ip", "GET http://169.254.169.254/latest HTTP/1.1\r\n{AUTH}\r\n", 403, ip_literal},
      {"nip_io", "CONNECT 127.0.0.1.nip.io:443 HTTP/1.1\r\n{AUTH}\r\n", 403, not_allowed},
      // Names and matching.
      {"trailing_dot", "CONNECT allowed.test.:{ECHO} HTTP/1.1\r\n{AUTH}\r\n", 200, {}},
      {"upper_case", "CONNECT ALLOWED.Test:{ECHO} HTTP/1.1\r\n{AUTH}\r\n", 200, {}},
      {"subdomain", "CONNECT sub.allowed.test:{ECHO} HTTP/1.1\r\n{AUTH}\r\n", 200, {}},
      {"two_trailing_dots", "CONNECT allowed.test..:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"suffix_attack", "CONNECT allowed.test.evil.test:443 HTTP/1.1\r\n{AUTH}\r\n", 403, not_allowed},
      {"no_label_boundary", "CONNECT evilallowed.test:443 HTTP/1.1\r\n{AUTH}\r\n", 403, not_allowed},
      {"wildcard", "CONNECT *.allowed.test:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"unicode", "CONNECT g\xc3\xad" "thub.com:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_target},
      {"percent", "CONNECT %67ithub.com:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"underscore", "CONNECT a_b.allowed.test:443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      {"empty_host", "CONNECT :443 HTTP/1.1\r\n{AUTH}\r\n", 400, bad_host},
      // Userinfo.
      {"connect_userinfo", "CONNECT allowed.test@evil.test:443 HTTP/1.1\r\n{AUTH}\r\n", 400, userinfo},
      {"get_userinfo", "GET http://allowed.test@evil.test/ HTTP/1.1\r\n{AUTH}\r\n", 400, userinfo},
      {"fragment_userinfo", "GET http://evil.test#@allowed.test/ HTTP/1.1\r\n{AUTH}\r\n", 400, bad_target},
      {"backslash_userinfo", "GET http://allowed.test\\@evil.test/ HTTP/1.1\r\n{AUTH}\r\n", 400, bad_target},
      // Forms.
      {"absolute_form_host_evil", "GET http://allowed.test:{HTTP}/ HTTP/1.1\r\nHost: evil.test\r\n{AUTH}\r\n", 200, {}},
      {"origin_form", "GET / HTTP/1.1\r\nHost: allowed.test\r\n{AUTH}\r\n", 400, origin_form},
      {"https_absolute_form", "GET https://allowed.test/ HTTP/1.1\r\n{AUTH}\r\n", 400, unsupported_scheme},
      {"plain_http_denied", "GET http://evil.test/?d=x HTTP/1.1\r\n{AUTH}\r\n", 403, not_allowed},
      // Smuggling.
      {"cl_and_te", "POST http://allowed.test:{HTTP}/ HTTP/1.1\r\n{AUTH}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, body_framing},
      {"te_list", "POST http://allowed.test:{HTTP}/ HTTP/1.1\r\n{AUTH}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400, body_framing},
      {"cl_list", "POST http://allowed.test:{HTTP}/ HTTP/1.1\r\n{AUTH}Content-Length: 5, 6\r\n\r\nhello", 400, body_framing},
      {"connect_with_body", "CONNECT allowed.test:{ECHO} HTTP/1.1\r\n{AUTH}Content-Length: 5\r\n\r\nhello", 400, body_framing},
      // Not HTTP at all: a TLS ClientHello sent straight to the proxy.
      {"tls_to_proxy", std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11), 400, bad_request_line},
  };
  return r;
}

class EscapeListB : public ProxyTest, public ::testing::WithParamInterface<Row> {};

TEST_P(EscapeListB, Row) {
  start();
  const Row& row = GetParam();
  const std::string bytes = expand(row.bytes, auth(), echo_.port(), http_.port());
  const auto t0 = std::chrono::steady_clock::now();
  // An allowed row's tunnel stays open: its answer is read to the end of the 200's head.
  const std::string resp =
      roundtrip(port_, bytes, std::chrono::seconds(3), row.reason.empty() ? "\r\n\r\n" : "");
  EXPECT_EQ(status_of(resp), row.status) << resp.substr(0, 300);
  if (row.reason.empty()) return;
  // Refused: said why, closed promptly, nothing looked up, nothing connected.
  EXPECT_EQ(header_of(resp, "x-proxy-error"), row.reason) << resp.substr(0, 300);
  EXPECT_EQ(resp.find("<b>"), std::string::npos) << "the refusal echoes what the client sent: " << resp;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2)) << "the connection was not closed";
  if (row.status == 407) {
    EXPECT_EQ(header_of(resp, "proxy-authenticate"), "Basic realm=\"parallex\"");
  }
  EXPECT_TRUE(resolver_.asked().empty());
  EXPECT_EQ(echo_.connections() + http_.connections(), 0);
  EXPECT_EQ(resp.find(kPassword), std::string::npos);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["reason"], row.reason);
  EXPECT_EQ(lines[0]["status"], row.status);
  EXPECT_EQ(read_file(dir_ / "proxy.jsonl").find(kPassword), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Rows, EscapeListB, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<Row>& row_info) { return std::string(row_info.param.name); });

TEST_F(ProxyTest, PipelinedSecondRequestIsNeverForwarded) {
  start();
  const std::string first = "GET http://allowed.test:" + std::to_string(http_.port()) + "/one HTTP/1.1\r\n" + auth() + "\r\n";
  const std::string second = "GET http://evil.test/two HTTP/1.1\r\n" + auth() + "\r\n";
  const std::string resp = roundtrip(port_, first + second);
  EXPECT_EQ(status_of(resp), 200);
  EXPECT_EQ(resp.find("HTTP/1.1", 5), std::string::npos);  // one response only
  ASSERT_EQ(http_.requests().size(), 1u);
  EXPECT_EQ(http_.requests()[0].find("/two"), std::string::npos);
  EXPECT_EQ(resolver_.asked(), std::vector<std::string>{"allowed.test"});
}

TEST_F(ProxyTest, BadChunkIsNotForwarded) {
  start();
  for (const char* body : {"fffffffffffffffffff\r\n", "5\nhello\r\n0\r\n\r\n"}) {
    const std::string resp = roundtrip(port_, "POST http://allowed.test:" + std::to_string(http_.port()) +
                                                 "/ HTTP/1.1\r\n" + auth() + "Transfer-Encoding: chunked\r\n\r\n" + body);
    EXPECT_EQ(resp.find("hello from upstream"), std::string::npos) << body;
  }
}

}  // namespace
}  // namespace px::proxy::test
