// The request parser and the request's meaning, on raw bytes.
#include <gtest/gtest.h>

#include "harness.hpp"
#include "proxy/reasons.hpp"
#include "proxy/request_parser.hpp"

namespace px::proxy {
namespace {

ParseResult parse(const std::string& bytes, Request& r, HeadLimits limits = {}) {
  return parse_request_head(bytes, limits, r);
}

TEST(Parser, GoodConnect) {
  Request r;
  const std::string head =
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nUser-Agent:  curl \r\n\r\n";
  auto p = parse(head + "extra", r);
  ASSERT_EQ(p.state, ParseState::good);
  EXPECT_EQ(r.method, "CONNECT");
  EXPECT_EQ(r.target, "example.com:443");
  EXPECT_EQ(r.head_size, head.size());
  ASSERT_NE(r.find("user-agent"), nullptr);
  EXPECT_EQ(r.find("USER-AGENT")->value, "curl");
}

TEST(Parser, NeedsMoreUntilTheBlankLine) {
  const std::string head = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
  for (std::size_t i = 0; i < head.size(); ++i) {
    Request r;
    EXPECT_EQ(parse(head.substr(0, i), r).state, ParseState::need_more) << i;
  }
}

struct BadCase {
  std::string bytes;
  int status;
  std::string_view reason;
};

class ParserBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParserBad, IsRefused) {
  Request r;
  const auto p = parse(GetParam().bytes, r);
  EXPECT_EQ(p.state, ParseState::bad);
  EXPECT_EQ(p.status, GetParam().status);
  EXPECT_EQ(p.reason, GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    EscapeList, ParserBad,
    ::testing::Values(
        BadCase{"connect a.test:443 HTTP/1.1\r\n\r\n", 400, reason::bad_method},
        BadCase{"GET /\r\n\r\n", 400, reason::bad_version},
        BadCase{"CONNECT a.test:443 HTTP/2.0\r\n\r\n", 400, reason::bad_version},
        BadCase{"CONNECT a.test:443 HTTP/1.1 \r\n\r\n", 400, reason::bad_request_line},
        BadCase{"CONNECT  a.test:443 HTTP/1.1\r\n\r\n", 400, reason::bad_request_line},
        BadCase{"CONNECT\ta.test:443\tHTTP/1.1\r\n\r\n", 400, reason::bad_request_line},
        BadCase{"CONNECT a.test:443 HTTP/1.1\n\n", 400, reason::bare_line_feed},
        BadCase{"CONNECT a.test:443 HTTP/1.1\r\nHost: a\n\r\n", 400, reason::bare_line_feed},
        BadCase{std::string("CONNECT a.test:443\0 HTTP/1.1\r\n\r\n", 32), 400, reason::bad_request_line},
        BadCase{std::string("GET http://a/ HTTP/1.1\r\nX: a\0b\r\n\r\n", 34), 400, reason::bad_header},
        BadCase{"GET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400, reason::obs_fold},
        BadCase{"GET http://a/ HTTP/1.1\r\nHost : a\r\n\r\n", 400, reason::bad_header},
        BadCase{"GET http://a/ HTTP/1.1\r\n: a\r\n\r\n", 400, reason::bad_header},
        BadCase{"GET http://a/ HTTP/1.1\r\nNoColon\r\n\r\n", 400, reason::bad_header},
        BadCase{"GET http://a/\xc3\xa9 HTTP/1.1\r\n\r\n", 400, reason::bad_target},
        BadCase{"GET http://a/ HTTP/1.1\rX\r\n\r\n", 400, reason::bad_request_line},
        BadCase{"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400, reason::bad_request_line}));

TEST(Parser, Limits) {
  Request r;
  EXPECT_EQ(parse("GET http://a/" + std::string(9000, 'a'), r).status, 414);
  EXPECT_EQ(parse("GET http://a/" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", r).status, 414);
  std::string many = "GET http://a/ HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(parse(many + "\r\n", r).status, 431);
  EXPECT_EQ(parse(many + "\r\n", r).reason, reason::too_many_headers);
  const std::string big = "GET http://a/ HTTP/1.1\r\nX: " + std::string(17000, 'v');
  EXPECT_EQ(parse(big, r).status, 431);
  EXPECT_EQ(parse(big + "\r\n\r\n", r).status, 431);
  std::string exactly100 = "GET http://a/ HTTP/1.1\r\n";
  for (int i = 0; i < 100; ++i) exactly100 += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(parse(exactly100 + "\r\n", r).state, ParseState::good);
}

Verdict meaning(const std::string& head, Target& t) {
  Request r;
  auto p = parse_request_head(head, {}, r);
  if (p.state != ParseState::good) return {p.status, p.reason};
  return interpret(r, t);
}

TEST(Interpret, TargetsAndFraming) {
  Target t;
  EXPECT_TRUE(meaning("GET http://a.test/x?y=1 HTTP/1.1\r\nHost: evil.test\r\n\r\n", t).ok());
  EXPECT_EQ(t.endpoint.host, "a.test");
  EXPECT_EQ(t.endpoint.port, 80);
  EXPECT_EQ(t.path, "/x?y=1");
  EXPECT_TRUE(meaning("GET HTTP://A.test:8080?q HTTP/1.1\r\n\r\n", t).ok());
  EXPECT_EQ(t.path, "/?q");
  EXPECT_EQ(t.endpoint.port, 8080);
  const std::pair<const char*, std::string_view> bad[] = {
      {"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", reason::origin_form},
      {"GET https://a.test/ HTTP/1.1\r\n\r\n", reason::unsupported_scheme},
      {"GET ftp://a.test/ HTTP/1.1\r\n\r\n", reason::unsupported_scheme},
      {"GET http://allowed.com@evil.com/ HTTP/1.1\r\n\r\n", reason::userinfo},
      {"GET http://evil.com#@allowed.com/ HTTP/1.1\r\n\r\n", reason::bad_target},
      {"GET http://allowed.com\\@evil.com/ HTTP/1.1\r\n\r\n", reason::bad_target},
      {"GET http://a.test/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", reason::duplicate_header},
      {"CONNECT a.test:443 HTTP/1.1\r\nHost: b.test:443\r\n\r\n", reason::host_mismatch},
      {"CONNECT http://a.test:443 HTTP/1.1\r\n\r\n", reason::bad_port},
      {"CONNECT a.test HTTP/1.1\r\n\r\n", reason::bad_port},
      {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
       reason::body_framing},
      {"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n", reason::body_framing},
      {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n", reason::body_framing},
      {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
       reason::body_framing},
      {"POST http://a.test/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n", reason::body_framing},
      {"POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", reason::body_framing},
  };
  for (const auto& [head, why] : bad) {
    const Verdict v = meaning(head, t);
    EXPECT_EQ(v.status, 400) << head;
    EXPECT_EQ(v.reason, why) << head;
  }
  EXPECT_TRUE(meaning("CONNECT a.test:443 HTTP/1.1\r\nHost: A.test:443\r\n\r\n", t).ok());
  EXPECT_TRUE(t.is_connect);
}

TEST(Auth, BasicOnlyAndConstantTime) {
  using test::basic_auth;
  const std::string pw = "0123456789abcdef0123456789abcdef";
  const auto check = [&](const std::string& header) {
    Request r;
    const std::string head = "CONNECT a.test:443 HTTP/1.1\r\n" + header + "\r\n";
    EXPECT_EQ(parse_request_head(head, {}, r).state, ParseState::good) << head;
    return check_proxy_auth(r, pw);
  };
  EXPECT_EQ(check(""), AuthResult::missing);
  EXPECT_EQ(check("Proxy-Authorization: " + basic_auth("px", pw) + "\r\n"), AuthResult::ok);
  EXPECT_EQ(check("proxy-authorization: basic " + basic_auth("any", pw).substr(6) + "\r\n"), AuthResult::ok);
  EXPECT_EQ(check("Proxy-Authorization: " + basic_auth("px", pw + "x") + "\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: " + basic_auth("px", "wrong") + "\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: " + basic_auth("", pw) + "\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: " + basic_auth("px", pw + ":x") + "\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: " + basic_auth(pw, "") + "\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: Basic !!!!\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: Basic cHg6YQ=\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: Basic cH=6YQ==\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: Bearer " + pw + "\r\n"), AuthResult::wrong);
  EXPECT_EQ(check("Proxy-Authorization: Basic\r\n"), AuthResult::wrong);
}

// The header's base64 is decoded strictly: each padding length, every byte
// value, and nothing a lenient decoder would take (padding inside, spaces,
// the URL-safe alphabet, missing or extra padding).
TEST(Auth, TheCredentialsAreStrictBase64) {
  const std::string pw = "0123456789abcdef0123456789abcdef";
  const auto check = [](const std::string& encoded, const std::string& password) {
    Request r;
    const std::string head =
        "CONNECT a.test:443 HTTP/1.1\r\nProxy-Authorization: Basic " + encoded + "\r\n\r\n";
    EXPECT_EQ(parse_request_head(head, {}, r).state, ParseState::good) << head;
    return check_proxy_auth(r, password);
  };
  // "px:" + the password, encoded by Python's base64 module.
  EXPECT_EQ(check("cHg6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", pw), AuthResult::ok);
  EXPECT_EQ(check("cHg6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWZ4", pw + "x"), AuthResult::ok);
  EXPECT_EQ(check("cHg6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWZ4eQ==", pw + "xy"), AuthResult::ok);
  EXPECT_EQ(check("cHg6//4AcGFzcw==", std::string("\xff\xfe\0pass", 7)), AuthResult::ok);
  EXPECT_EQ(check("cHg6__4AcGFzcw==", std::string("\xff\xfe\0pass", 7)), AuthResult::wrong);
  EXPECT_EQ(check("cHg6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWZ4eQ", pw + "xy"), AuthResult::wrong);
  EXPECT_EQ(check("cHg6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY==", pw), AuthResult::wrong);
  EXPECT_EQ(check("cHg6MDEyMzQ1Njc4OWFi=2RlZjAxMjM0NTY3ODlhYmNkZWY", pw), AuthResult::wrong);
  EXPECT_EQ(check("cHg6MDEyMzQ1 Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", pw), AuthResult::wrong);
  EXPECT_EQ(check("cHg6YQ==cHg6YQ==", "a"), AuthResult::wrong);
  EXPECT_EQ(check("cHg6YQ==", "a"), AuthResult::ok);
}

TEST(UpstreamHead, DropsProxyAndHopByHopHeaders) {
  Request r;
  const std::string head =
      "POST http://a.test:8080/p HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic eA==\r\n"
      "Proxy-Connection: keep-alive\r\nConnection: Upgrade, X-Secret\r\nUpgrade: h2c\r\nHTTP2-Settings: x\r\n"
      "X-Secret: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\nContent-Length: 3\r\nAccept: */*\r\n\r\n";
  ASSERT_EQ(parse_request_head(head, {}, r).state, ParseState::good);
  Target t;
  ASSERT_TRUE(interpret(r, t).ok());
  EXPECT_EQ(upstream_head(r, t),
            "POST /p HTTP/1.1\r\nHost: a.test:8080\r\nContent-Length: 3\r\nAccept: */*\r\nConnection: "
            "close\r\n\r\n");
}

TEST(Chunked, FollowsOneBodyExactly) {
  ChunkedTracker t;
  const std::string body = "5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n";
  const auto s = t.feed(body + "GET http://evil/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(s.done);
  EXPECT_FALSE(s.error);
  EXPECT_EQ(s.consumed, body.size());
  // Byte by byte gives the same answer.
  ChunkedTracker t2;
  std::size_t total = 0;
  bool done = false;
  for (char c : body) {
    const auto step = t2.feed(std::string_view(&c, 1));
    ASSERT_FALSE(step.error);
    total += step.consumed;
    done = step.done;
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(total, body.size());
  for (const char* bad :
       {"fffffffffffffffff\r\n", "5\nhello\r\n", "5\r\nhelloX\r\n", "x\r\n", " 5\r\n", "0\r\n\n"}) {
    ChunkedTracker b;
    EXPECT_TRUE(b.feed(bad).error) << bad;
  }
}

}  // namespace
}  // namespace px::proxy
