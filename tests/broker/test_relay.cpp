// The terminating relay with a raw OpenSSL client: what reaches the server,
// what reaches the client, and what the log says.
#include "broker/reasons.hpp"
#include "broker_harness.hpp"
#include "common/base64.hpp"
#include "contains.hpp"

namespace px::broker::test {
namespace {

using px::test::contains;

using proxy::test::basic_auth;
using proxy::test::header_of;
using proxy::test::status_of;

std::string get(const std::string& host, std::uint16_t port, const std::string& path,
                const std::string& extra = {}) {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) + "\r\n" + extra +
         "Connection: close\r\n\r\n";
}

std::string all_text(const std::vector<nlohmann::json>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.dump() + "\n";
  return out;
}

class RelayTest : public BrokerTest {
 protected:
  TlsOptions trusting() const { return {{}, broker_->trust_files().bundle, std::chrono::milliseconds(8000)}; }
  TlsResult send(const std::string& host, const std::string& request, TlsOptions o = {}) {
    if (o.ca_file.empty()) o.ca_file = broker_->trust_files().bundle;
    return tls_exchange(front_->connect_port(), host, upstream_->port(), request, o);
  }
};

TEST_F(RelayTest, TheServerGetsTheSecretTheClientOnlyEverSeesThePlaceholder) {
  start();
  const std::string ph = placeholder("github");
  ASSERT_EQ(ph.size(), kGithubSecret.size());
  ASSERT_NE(ph, kGithubSecret);
  const auto r = send("bound.test",
                      get("bound.test", upstream_->port(), "/echo", "Authorization: Bearer " + ph + "\r\n"));
  ASSERT_TRUE(r.handshake) << r.error;
  EXPECT_EQ(status_of(r.response), 200) << r.response;
  const auto seen = upstream_->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(contains(seen[0].dump(), "Bearer " + kGithubSecret)) << seen[0].dump();
  EXPECT_FALSE(contains(seen[0].dump(), ph));
  // The server echoes the header: the relay gives the client the placeholder back.
  EXPECT_FALSE(contains(r.response, kGithubSecret)) << r.response;
  EXPECT_TRUE(contains(r.response, "Bearer " + ph)) << r.response;
  front_.reset();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u) << all_text(lines);
  EXPECT_EQ(lines[0]["method"], "GET");
  EXPECT_EQ(lines[0]["host"], "bound.test");
  EXPECT_EQ(lines[0]["status"], 200);
  EXPECT_EQ(lines[0]["verdict"], "allowed");
  EXPECT_EQ(lines[0]["credentials"], "github");
  EXPECT_EQ(lines[0]["rule"], "no rules");
  const std::string log = read_file(dir_ / "requests.jsonl");
  EXPECT_FALSE(contains(log, kGithubSecret));
  EXPECT_FALSE(contains(log, ph));
}

TEST_F(RelayTest, BasicCredentialsAreDecodedSwappedAndReencoded) {
  start();
  const std::string ph = placeholder("github");
  const auto r = send("bound.test", get("bound.test", upstream_->port(), "/echo",
                                        "Authorization: " + basic_auth("x-access-token", ph) + "\r\n"));
  ASSERT_TRUE(r.handshake) << r.error;
  EXPECT_EQ(status_of(r.response), 200);
  const auto seen = upstream_->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(contains(seen[0].dump(), basic_auth("x-access-token", kGithubSecret))) << seen[0].dump();
  // Echoed back in base64: hidden again (the aligned part of the encoding).
  EXPECT_FALSE(contains(r.response, basic_auth("x-access-token", kGithubSecret))) << r.response;
}

TEST_F(RelayTest, ApiKeyHeaderOnACapturedConnectionWithEarlyBytes) {
  start();
  // Through the capture port: the front read the start of the ClientHello
  // before handing the connection over.
  const std::string ph = placeholder("anthropic");
  const int fd = proxy::test::connect_to(front_->capture_port());
  ASSERT_GE(fd, 0);
  const std::string req =
      "POST /echo HTTP/1.1\r\nHost: api.anthropic.test:" + std::to_string(front_->capture_port()) +
      "\r\nx-api-key: " + ph + "\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
  const TlsResult r = tls_on_socket(fd, "api.anthropic.test", req, trusting());
  ::close(fd);
  ASSERT_TRUE(r.handshake) << r.error;
  const std::string& response = r.response;
  EXPECT_EQ(status_of(response), 200) << response;
  EXPECT_GT(front_->early_bytes_passed(), 0u);
  const auto seen = upstream_->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(contains(seen[0].dump(), kAnthropicSecret));
  EXPECT_EQ(seen[0]["body"], "hello");
  EXPECT_FALSE(contains(response, kAnthropicSecret));
}

TEST_F(RelayTest, KeepAliveChunkedAndExpectContinue) {
  start();
  const std::string host = "Host: bound.test:" + std::to_string(upstream_->port()) + "\r\n";
  const std::string pipelined = "GET /echo/1 HTTP/1.1\r\n" + host + "\r\n" +  // keep-alive
                                "POST /echo/2 HTTP/1.1\r\n" + host +
                                "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" +
                                "PUT /echo/3 HTTP/1.1\r\n" + host +
                                "Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc" +
                                "HEAD /echo/4 HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n";
  const auto r = send("bound.test", pipelined);
  ASSERT_TRUE(r.handshake) << r.error;
  const auto seen = upstream_->requests();
  ASSERT_EQ(seen.size(), 4u) << r.response;
  EXPECT_EQ(seen[1]["body"], "hello world");
  EXPECT_EQ(seen[2]["body"], "abc");
  EXPECT_EQ(seen[3]["method"], "HEAD");
  // Four final answers (and a 100 Continue) on one connection, in order.
  std::size_t finals = 0;
  for (std::size_t at = r.response.find("HTTP/1.1 200"); at != std::string::npos;
       at = r.response.find("HTTP/1.1 200", at + 1))
    ++finals;
  EXPECT_EQ(finals, 4u) << r.response;
  EXPECT_TRUE(contains(r.response, "HTTP/1.1 100 Continue")) << r.response;
  front_.reset();
  EXPECT_EQ(log_lines().size(), 4u);
}

TEST_F(RelayTest, ManyPipelinedRequestsAreAnsweredInOrder) {
  start();
  // More than the relay reads ahead (32): it stops reading the client until
  // answers go out, and every request is still answered, in order.
  std::string many;
  for (int i = 0; i < 80; ++i) {
    many += "GET /echo/" + std::to_string(i) +
            " HTTP/1.1\r\nHost: bound.test:" + std::to_string(upstream_->port()) +
            (i == 79 ? "\r\nConnection: close" : "") + "\r\n\r\n";
  }
  const auto r = send("bound.test", many);
  ASSERT_TRUE(r.handshake) << r.error;
  std::size_t answered = 0;
  for (std::size_t at = r.response.find("HTTP/1.1 200"); at != std::string::npos;
       at = r.response.find("HTTP/1.1 200", at + 1)) {
    ++answered;
  }
  EXPECT_EQ(answered, 80u);
  const auto seen = upstream_->requests();
  ASSERT_EQ(seen.size(), 80u);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i]["path"], "/echo/" + std::to_string(i));
}

TEST_F(RelayTest, ABodyReadToTheEndOfTheConnectionArrivesWhole) {
  start();
  const auto r = send("bound.test", get("bound.test", upstream_->port(), "/close"));
  ASSERT_TRUE(r.handshake) << r.error;
  EXPECT_EQ(status_of(r.response), 200);
  EXPECT_TRUE(contains(r.response, "read to the end")) << r.response;
}

TEST_F(RelayTest, RequestRulesFirstMatchWinsWithTheReasonInTheBody) {
  start();
  const std::uint16_t port = upstream_->port();
  const auto host = "Host: rules.test:" + std::to_string(port) + "\r\n";
  const auto allowed = send("rules.test", "POST /o/r.git/git-receive-pack HTTP/1.1\r\n" + host +
                                              "Content-Length: 2\r\nConnection: close\r\n\r\nok");
  EXPECT_EQ(status_of(allowed.response), 200) << allowed.response;
  const auto denied = send("rules.test", "POST /o/other.git/git-receive-pack HTTP/1.1\r\n" + host +
                                             "Content-Length: 2\r\nConnection: close\r\n\r\nno");
  EXPECT_EQ(status_of(denied.response), 403) << denied.response;
  EXPECT_EQ(header_of(denied.response, "x-proxy-error"), reason::rule_denied);
  EXPECT_TRUE(contains(denied.response, "push only to my repos")) << denied.response;
  // Case and a trailing slash do not walk around a deny rule.
  const auto upper = send("rules.test", "DELETE /O/R.git/ HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n");
  EXPECT_EQ(status_of(upper.response), 403);
  const auto dots = send("rules.test", "POST /o/r.git/x/../git-receive-pack HTTP/1.1\r\n" + host +
                                           "Content-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(dots.response), 400);
  EXPECT_EQ(header_of(dots.response, "x-proxy-error"), reason::ambiguous_path);
  const auto get_ok = send("rules.test", get("rules.test", port, "/anything?q=secret-query"));
  EXPECT_EQ(status_of(get_ok.response), 200);
  // Only the allowed ones reached the server.
  const auto seen = upstream_->requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0]["path"], "/o/r.git/git-receive-pack");
  front_.reset();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 5u) << all_text(lines);
  EXPECT_EQ(lines[0]["rule"], "rules.test #2 allow POST /o/r.git/git-receive-pack");
  EXPECT_EQ(lines[1]["verdict"], "denied");
  EXPECT_EQ(lines[1]["reason"], reason::rule_denied);
  EXPECT_EQ(lines[1]["rule"], "rules.test #3 deny * /**");
  EXPECT_EQ(lines[4]["path"], "/anything?[query]");
  EXPECT_FALSE(contains(all_text(lines), "secret-query"));
  const auto report = broker_->report();
  ASSERT_EQ(report.hosts.size(), 1u);
  EXPECT_EQ(report.hosts[0].requests, 5u);
  EXPECT_EQ(report.hosts[0].refused, 3u);
}

TEST_F(RelayTest, APlaceholderGoingToAnotherHostIsRefusedAndReported) {
  start();
  const std::string ph = placeholder("github");
  const std::uint16_t port = upstream_->port();
  // In a header, in the query (plain and percent-encoded), in a body, base64 in a body.
  const auto in_header = send("rules.test", get("rules.test", port, "/", "X-Token: " + ph + "\r\n"));
  EXPECT_EQ(status_of(in_header.response), 403) << in_header.response;
  EXPECT_EQ(header_of(in_header.response, "x-proxy-error"), reason::exfiltration);
  EXPECT_FALSE(contains(in_header.response, ph));
  std::string encoded;
  for (const char c : ph) {
    char b[4];
    std::snprintf(b, sizeof b, "%%%02X", static_cast<unsigned char>(c));
    encoded += b;
  }
  const auto in_query = send("rules.test", get("rules.test", port, "/search?t=" + encoded));
  EXPECT_EQ(status_of(in_query.response), 403) << in_query.response;
  const std::string body = "{\"note\":\"" + ph + "\"}";
  const auto in_body =
      send("rules.test",
           "POST /o/r.git/git-receive-pack HTTP/1.1\r\nHost: rules.test:" + std::to_string(port) +
               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  EXPECT_EQ(status_of(in_body.response), 403) << in_body.response;
  const std::string b64 = base64_encode("x" + ph);  // not on a 3-byte boundary
  const std::string chunked =
      "POST /o/r.git/git-receive-pack HTTP/1.1\r\nHost: rules.test:" + std::to_string(port) +
      "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + "5\r\n" + b64.substr(0, 5) + "\r\n" +
      [&] {
        char h[16];
        std::snprintf(h, sizeof h, "%zx", b64.size() - 5);
        return std::string(h);
      }() +
      "\r\n" + b64.substr(5) + "\r\n0\r\n\r\n";
  const auto in_chunks = send("rules.test", chunked);
  EXPECT_EQ(status_of(in_chunks.response), 403) << in_chunks.response;
  // The secret itself to another host is refused the same way.
  const auto the_secret =
      send("rules.test", get("rules.test", port, "/", "Authorization: token " + kGithubSecret + "\r\n"));
  EXPECT_EQ(status_of(the_secret.response), 403);

  // Nothing carrying it reached the server; the body requests never completed.
  for (const auto& seen : upstream_->requests()) {
    EXPECT_FALSE(contains(seen.dump(), ph)) << seen.dump();
    EXPECT_FALSE(contains(seen.dump(), kGithubSecret)) << seen.dump();
  }
  front_.reset();
  const auto report = broker_->report();
  std::uint64_t attempts = 0;
  for (const auto& a : report.exfiltration) {
    EXPECT_EQ(a.credential, "github");
    EXPECT_EQ(a.host, "rules.test");
    attempts += a.count;
  }
  EXPECT_EQ(attempts, 5u);
  EXPECT_TRUE(
      contains(format_report(report), "EXFILTRATION ATTEMPT refused: credential github sent to rules.test"));
  const std::string log = read_file(dir_ / "requests.jsonl");
  EXPECT_FALSE(contains(log, ph));
  EXPECT_FALSE(contains(log, kGithubSecret));
  EXPECT_TRUE(contains(log, std::string(reason::exfiltration)));
}

TEST_F(RelayTest, AnotherServerNameInsideTheTunnelIsRefused) {
  start();
  TlsOptions o;
  o.sni = "rules.test";  // CONNECT bound.test, then a ClientHello for rules.test
  const auto r = send("bound.test", get("bound.test", upstream_->port(), "/"), o);
  EXPECT_FALSE(r.handshake);
  EXPECT_TRUE(upstream_->requests().empty());
  EXPECT_TRUE(front_->wait_ends(1));
  front_.reset();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["reason"], reason::sni_mismatch);
  EXPECT_TRUE(contains(lines[0]["detail"].get<std::string>(), "rules.test"));
}

TEST_F(RelayTest, AClientThatRefusesTheRunCaIsLoggedAsSuch) {
  start();
  TlsOptions o;
  o.ca_file = TestPki::get().dir / "ca.crt";  // trusts another CA, not the run's
  const auto r = send("bound.test", get("bound.test", upstream_->port(), "/"), o);
  EXPECT_FALSE(r.handshake);
  EXPECT_TRUE(contains(r.error, "certificate verify failed")) << r.error;
  EXPECT_TRUE(front_->wait_ends(1));
  front_.reset();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["reason"], reason::client_refused_ca);
  EXPECT_TRUE(upstream_->requests().empty());
}

TEST_F(RelayTest, AnUpstreamWithABadCertificateIsARefusalNeverADowngrade) {
  UpstreamServer self_signed(TestPki::get().self_signed, dir_);
  UpstreamServer wrong_name(TestPki::get().wrong_name, dir_);
  ASSERT_TRUE(self_signed.running() && wrong_name.running());
  routes_["bound.test"] = self_signed.port();
  routes_["api.anthropic.test"] = wrong_name.port();
  start();
  for (const auto& [host, server] :
       {std::pair{"bound.test", &self_signed}, std::pair{"api.anthropic.test", &wrong_name}}) {
    const std::string key = host == std::string("bound.test")
                                ? "Authorization: Bearer " + placeholder("github")
                                : "x-api-key: " + placeholder("anthropic");
    const auto r = send(host, get(host, upstream_->port(), "/echo", key + "\r\n"));
    ASSERT_TRUE(r.handshake) << r.error;
    EXPECT_EQ(status_of(r.response), 502) << r.response;
    EXPECT_EQ(header_of(r.response, "x-proxy-error"), reason::upstream_certificate);
    EXPECT_TRUE(server->requests().empty())
        << "nothing, and no secret, reached a server that failed verification";
  }
  front_.reset();
  const std::string log = read_file(dir_ / "requests.jsonl");
  EXPECT_TRUE(contains(log, "self-signed certificate") || contains(log, "unable to get local issuer")) << log;
  EXPECT_TRUE(contains(log, "hostname mismatch")) << log;
}

TEST_F(RelayTest, WebSocketUpgradeBecomesATunnelAfterItsRequestWasChecked) {
  start();
  TlsOptions quick;
  quick.timeout = std::chrono::milliseconds(1500);
  const auto r = send("ws.test",
                      "GET /ws HTTP/1.1\r\nHost: ws.test:" + std::to_string(upstream_->port()) +
                          "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
                      quick);
  ASSERT_TRUE(r.handshake);
  // The raw client sends nothing after the head and reads until the timeout:
  // the 101 arrived; the echo part is covered by the Node client test.
  EXPECT_EQ(status_of(r.response), 101) << r.response;
  const auto refused =
      send("ws.test", "GET /other HTTP/1.1\r\nHost: ws.test:" + std::to_string(upstream_->port()) +
                          "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
  EXPECT_EQ(status_of(refused.response), 403);
  const auto h2c = send("ws.test", "GET /ws HTTP/1.1\r\nHost: ws.test:" + std::to_string(upstream_->port()) +
                                       "\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n");
  EXPECT_EQ(status_of(h2c.response), 400);
  EXPECT_EQ(header_of(h2c.response, "x-proxy-error"), reason::upgrade_refused);
}

TEST_F(RelayTest, MalformedOrMisdirectedRequestsAreRefused) {
  start();
  const std::uint16_t port = upstream_->port();
  const auto other_host = send("bound.test", get("rules.test", port, "/"));
  EXPECT_EQ(status_of(other_host.response), 421);
  const auto absolute =
      send("bound.test",
           "GET https://bound.test/ HTTP/1.1\r\nHost: bound.test:" + std::to_string(port) + "\r\n\r\n");
  EXPECT_EQ(status_of(absolute.response), 400);
  const auto smuggle = send("bound.test", "POST / HTTP/1.1\r\nHost: bound.test:" + std::to_string(port) +
                                              "\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(status_of(smuggle.response), 400);
  const auto huge = send("bound.test", "GET / HTTP/1.1\r\nHost: bound.test:" + std::to_string(port) +
                                           "\r\nX: " + std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(status_of(huge.response), 431);
  EXPECT_TRUE(upstream_->requests().empty());
}

TEST_F(RelayTest, AHeadThatNeverEndsTimesOut) {
  start();
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = send("bound.test", "GET / HTTP/1.1\r\nHost: bound.test\r\n");  // no blank line
  EXPECT_EQ(status_of(r.response), 408) << r.response;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(7));
}

}  // namespace
}  // namespace px::broker::test
