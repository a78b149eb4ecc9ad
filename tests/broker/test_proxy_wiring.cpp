// The broker wired into the run's proxy (proxy/terminator.hpp): the real
// ProxyServer with a real Broker, a real HTTPS upstream and real clients.
// CONNECT tunnels to a terminated host go through the broker after the
// proxy's own decision; every other host stays an end-to-end tunnel; plain
// HTTP to a terminated host is refused; placeholders are looked for in
// destination names and in plain-HTTP heads and bodies; the kill switch's
// cut ends terminated connections too.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <thread>

#include "broker/reasons.hpp"
#include "broker_harness.hpp"
#include "contains.hpp"
#include "proxy/reasons.hpp"

namespace px::broker::test {
namespace {

using px::test::contains;

using proxy::test::basic_auth;
using proxy::test::connect_to;
using proxy::test::kPassword;
using proxy::test::read_until;
using proxy::test::roundtrip;
using proxy::test::send_all;
using proxy::test::status_of;

// 40 lower-case hex digits: a token that fits in a DNS label, so that its
// placeholder can be tried as a name.
const std::string kHexSecret = "3f9a1c7be04d5a6f28c913e7b5d04a6c1e2f8b97";

// sha256//BASE64 of a certificate's public key, as curl's --pinnedpubkey takes it.
std::string pin_of(const std::filesystem::path& cert_file) {
  FILE* f = std::fopen(cert_file.c_str(), "r");
  if (!f) return {};
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (!cert) return {};
  unsigned char* der = nullptr;
  const int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  unsigned char digest[32];
  unsigned int n = 0;
  EVP_Digest(der, static_cast<std::size_t>(len), digest, &n, EVP_sha256(), nullptr);
  OPENSSL_free(der);
  X509_free(cert);
  unsigned char b64[64] = {};
  EVP_EncodeBlock(b64, digest, static_cast<int>(n));
  return "sha256//" + std::string(reinterpret_cast<char*>(b64));
}

class ProxyWiringTest : public BrokerTest {
 protected:
  // The broker of BrokerTest (github bound to bound.test, rules on rules.test
  // and ws.test) plus `tweak`, behind a real ProxyServer that allows every
  // test name on the upstreams' ports and maps them to loopback.
  void start_proxy(const std::function<void(BrokerConfig&)>& tweak = {}) {
    start([&](BrokerConfig& c) {
      CredentialSpec hex;
      hex.name = "hexkey";
      hex.source = SecretSource::from_value(kHexSecret, "the test");
      hex.hosts = {"bound.test"};
      hex.env = {"HEX_KEY"};
      c.credentials.push_back(hex);
      if (tweak) tweak(c);
    });
    proxy::ProxyConfig config;
    config.mode = proxy::NetworkMode::allowlist;
    config.allowed_hosts = {"bound.test", "rules.test", "ws.test", "api.anthropic.test", "plain.test"};
    config.allowed_ports = {upstream_->port(), plain_.port()};
    config.local_servers = true;  // the upstreams are on loopback
    config.password = kPassword;
    config.log_path = dir_ / "proxy.jsonl";
    config.terminator = broker_;
    auto resolver = [](const std::string& host) -> Result<std::vector<boost::asio::ip::address>> {
      if (!host.ends_with(".test")) return Error::not_found(host);
      return std::vector<boost::asio::ip::address>{boost::asio::ip::make_address("127.0.0.1")};
    };
    auto server = proxy::ProxyServer::listen(config, "127.0.0.1", 0, resolver);
    ASSERT_TRUE(server) << server.error().message;
    proxy_ = std::move(server).value();
  }
  void TearDown() override {
    proxy_.reset();
    BrokerTest::TearDown();
  }

  std::string proxy_url() const { return "http://px:" + kPassword + "@" + proxy_->listen_address(); }
  std::string url(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + std::to_string(upstream_->port()) + path;
  }
  // The run's environment: the broker's variables (the bundle at its real
  // path: no seal here) and the proxy.
  std::vector<std::string> run_env() const {
    std::vector<std::string> env = {"NO_PROXY=",
                                    "no_proxy=",
                                    "HTTP_PROXY=",
                                    "http_proxy=",
                                    "ALL_PROXY=",
                                    "all_proxy=",
                                    "HTTPS_PROXY=" + proxy_url(),
                                    "https_proxy=" + proxy_url()};
    for (const auto& [k, v] : broker_->environment(broker_->trust_files().bundle.string()))
      env.push_back(k + "=" + v);
    return env;
  }
  CommandResult sh(const std::string& script, std::vector<std::string> extra = {}) const {
    auto env = run_env();
    env.insert(env.end(), extra.begin(), extra.end());
    return run_with_env(env, {"sh", "-c", script});
  }
  std::vector<nlohmann::json> proxy_log(const std::string& host) const {
    std::vector<nlohmann::json> out;
    for (const auto& l : read_json_lines(dir_ / "proxy.jsonl"))
      if (l.value("host", "") == host) out.push_back(l);
    return out;
  }
  bool server_saw(const std::string& needle) const {
    for (const auto& r : upstream_->requests())
      if (contains(r.dump(), needle)) return true;
    return false;
  }
  bool plain_saw(const std::string& needle) const {
    for (const auto& r : plain_.requests())
      if (contains(r, needle)) return true;
    return false;
  }
  // A plain-HTTP request through the proxy, raw: the answer's status.
  int plain_request(const std::string& head_and_body) const {
    return status_of(roundtrip(proxy_->port(), head_and_body));
  }
  std::string plain_target(const std::string& path) const {
    return "http://plain.test:" + std::to_string(plain_.port()) + path;
  }
  std::string auth() const { return "Proxy-Authorization: " + basic_auth("px", kPassword) + "\r\n"; }

  proxy::test::Upstream plain_{proxy::test::Upstream::Mode::http};
  std::unique_ptr<proxy::ProxyServer> proxy_;
};

TEST_F(ProxyWiringTest, CurlThroughTheRunsProxyGetsTheSecretSwappedIn) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  start_proxy();
  const std::string ph = placeholder("github");
  const CommandResult r =
      sh("curl -sS --max-time 10 -H \"Authorization: Bearer $GH_TOKEN\" " + url("bound.test", "/echo"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Bearer " + ph)) << "the echo shows the placeholder back: " << r.output;
  EXPECT_FALSE(contains(r.output, kGithubSecret));
  EXPECT_TRUE(server_saw("Bearer " + kGithubSecret));
  EXPECT_FALSE(server_saw(ph));

  proxy_->stop();
  const auto lines = proxy_log("bound.test");
  ASSERT_EQ(lines.size(), 1u) << read_file(dir_ / "proxy.jsonl");
  EXPECT_EQ(lines[0]["method"], "CONNECT");
  EXPECT_EQ(lines[0]["verdict"], "allowed");
  EXPECT_EQ(lines[0]["inspected"], "terminated");
  EXPECT_EQ(lines[0]["address"], "127.0.0.1") << "connected to the address the proxy checked";
  EXPECT_GT(lines[0]["bytes_up"].get<int>(), 0);
  EXPECT_GT(lines[0]["bytes_down"].get<int>(), 0);
  const auto requests = log_lines();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests.back()["host"], "bound.test");
  EXPECT_EQ(requests.back()["path"], "/echo");
  EXPECT_EQ(requests.back()["status"], 200);
  EXPECT_EQ(requests.back()["credentials"], "github");
}

TEST_F(ProxyWiringTest, RequestRulesApplyThroughTheProxy) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  start_proxy();
  const CommandResult get =
      sh("curl -s -o /dev/null -w '%{http_code}' --max-time 10 " + url("rules.test", "/o/r/info"));
  EXPECT_EQ(get.output, "200");
  const CommandResult push =
      sh("curl -s -D - --max-time 10 --data x " + url("rules.test", "/other/r.git/git-receive-pack"));
  EXPECT_TRUE(contains(push.output, "403")) << push.output;
  EXPECT_TRUE(contains(push.output, "x-proxy-error: request-rule-denied")) << push.output;
  EXPECT_TRUE(contains(push.output, "push only to my repos")) << push.output;
}

TEST_F(ProxyWiringTest, AHostThatIsNotTerminatedStaysAnEndToEndTunnel) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  // ws.test without rules: nothing to terminate.
  start_proxy([](BrokerConfig& c) { c.hosts.pop_back(); });
  ASSERT_FALSE(broker_->terminates("ws.test"));
  const std::string ca = (TestPki::get().dir / "ca.crt").string();
  // Only the upstream's own CA is trusted: the run's CA could not serve this.
  const CommandResult r =
      sh("curl -sS --max-time 10 --cacert " + ca + " " + url("ws.test", "/hello"), {"CURL_CA_BUNDLE=" + ca});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "hello from upstream")) << r.output;
  proxy_->stop();
  const auto lines = proxy_log("ws.test");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["inspected"], "tls-sni");
}

TEST_F(ProxyWiringTest, APinnedClientWorksWithPassthroughAndFailsAgainstATerminatedHost) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  start_proxy([](BrokerConfig& c) {
    c.hosts.pop_back();  // ws.test: passthrough instead of rules
    HostRequestRules pass;
    pass.host = "ws.test";
    pass.passthrough = true;
    c.hosts.push_back(pass);
  });
  const std::string ca = (TestPki::get().dir / "ca.crt").string();
  const std::string pin = pin_of(TestPki::get().server.cert);
  ASSERT_FALSE(pin.empty());
  const auto pinned = [&](const std::string& trusted, const std::string& target) {
    return sh("curl -sS --max-time 10 --cacert " + trusted + " --pinnedpubkey '" + pin + "' " + target);
  };
  const CommandResult through = pinned(ca, url("ws.test", "/hello"));
  EXPECT_EQ(through.status, 0) << through.output;
  EXPECT_TRUE(contains(through.output, "hello from upstream")) << through.output;
  // The same pinned client against a terminated host (the same server, the
  // same key behind it), trusting the run's CA: the run's leaf carries
  // another key, so the pin refuses it.
  const CommandResult terminated =
      pinned(broker_->trust_files().bundle.string(), url("rules.test", "/hello"));
  EXPECT_NE(terminated.status, 0) << terminated.output;
  EXPECT_TRUE(contains(terminated.output, "pinned")) << terminated.output;
  EXPECT_FALSE(contains(terminated.output, "hello from upstream"));
}

TEST_F(ProxyWiringTest, AClientThatRefusesTheRunCaIsRefusedWithTheReason) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  start_proxy();
  const CommandResult r = sh("curl -sS --max-time 10 " + url("bound.test", "/echo"),
                             {"CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt"});
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_FALSE(server_saw("/echo"));
  proxy_->stop();
  const auto lines = proxy_log("bound.test");
  ASSERT_EQ(lines.size(), 1u) << read_file(dir_ / "proxy.jsonl");
  EXPECT_EQ(lines[0]["verdict"], "denied");
  EXPECT_EQ(lines[0]["reason"], std::string(reason::client_refused_ca));
  const auto report = broker_->report();
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].reason, std::string(reason::client_refused_ca));
}

TEST_F(ProxyWiringTest, AClientHelloNamingAnotherServerIsRefused) {
  start_proxy();
  TlsOptions options;
  options.sni = "rules.test";
  options.ca_file = broker_->trust_files().bundle;
  const int fd = connect_to(proxy_->port());
  ASSERT_GE(fd, 0);
  const std::string target = "bound.test:" + std::to_string(upstream_->port());
  send_all(fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  const TlsResult r =
      tls_on_socket(fd, "rules.test", "GET /echo HTTP/1.1\r\nHost: rules.test\r\n\r\n", options);
  ::close(fd);
  EXPECT_FALSE(r.handshake) << r.response;
  EXPECT_FALSE(server_saw("/echo"));
  proxy_->stop();
  const auto lines = proxy_log("bound.test");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["reason"], std::string(reason::sni_mismatch));
}

TEST_F(ProxyWiringTest, APlaceholderInADestinationNameIsRefusedBeforeAnyLookup) {
  start_proxy();
  const std::string ph = placeholder("hexkey");
  ASSERT_EQ(ph.size(), kHexSecret.size());
  // rules.test allows its subdomains; the name would leave the run in a lookup.
  const std::string target = ph + ".rules.test:" + std::to_string(upstream_->port());
  const std::string answer = roundtrip(
      proxy_->port(), "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(answer), 403) << answer;
  EXPECT_TRUE(contains(answer, "x-proxy-error: credential-exfiltration")) << answer;
  const auto report = broker_->report();
  ASSERT_EQ(report.exfiltration.size(), 1u);
  EXPECT_EQ(report.exfiltration[0].credential, "hexkey");
  EXPECT_EQ(report.exfiltration[0].where, "destination name");
  proxy_->stop();
  const auto refused = proxy_->refused_hosts();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].reason, std::string(proxy::reason::credential_exfiltration));
}

TEST_F(ProxyWiringTest, PlainHttpToATerminatedHostIsRefused) {
  start_proxy();
  const std::string target = "http://bound.test:" + std::to_string(plain_.port()) + "/";
  const std::string answer = roundtrip(
      proxy_->port(), "GET " + target + " HTTP/1.1\r\nHost: bound.test:" + std::to_string(plain_.port()) +
                          "\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(answer), 403) << answer;
  EXPECT_TRUE(contains(answer, "x-proxy-error: plain-http-to-terminated-host")) << answer;
  EXPECT_EQ(plain_.connections(), 0) << "nothing reached the server";
}

TEST_F(ProxyWiringTest, APlaceholderInPlainHttpIsRefusedInTheQueryTheHeadersAndTheBody) {
  start_proxy();
  const std::string ph = placeholder("github");
  const std::string host = "Host: plain.test:" + std::to_string(plain_.port()) + "\r\n";
  // In the query, and in a header: refused before anything is connected.
  EXPECT_EQ(plain_request("GET " + plain_target("/?t=" + ph) + " HTTP/1.1\r\n" + host + auth() + "\r\n"),
            403);
  EXPECT_EQ(plain_request("GET " + plain_target("/") + " HTTP/1.1\r\n" + host + "X-Token: " + ph + "\r\n" +
                          auth() + "\r\n"),
            403);
  EXPECT_EQ(plain_.connections(), 0);
  // In a body (Content-Length), and percent-encoded is the same text here.
  const std::string body = "token=" + ph + "&more=1";
  EXPECT_EQ(plain_request("POST " + plain_target("/") + " HTTP/1.1\r\n" + host +
                          "Content-Length: " + std::to_string(body.size()) + "\r\n" + auth() + "\r\n" + body),
            403);
  // In a chunked body, split by a chunk boundary in the middle of the placeholder.
  const std::string a = "x=" + ph.substr(0, 10), b = ph.substr(10);
  auto hex = [](std::size_t n) {
    char s[16];
    std::snprintf(s, sizeof s, "%zx", n);
    return std::string(s);
  };
  EXPECT_EQ(plain_request("POST " + plain_target("/") + " HTTP/1.1\r\n" + host +
                          "Transfer-Encoding: chunked\r\n" + auth() + "\r\n" + hex(a.size()) + "\r\n" + a +
                          "\r\n" + hex(b.size()) + "\r\n" + b + "\r\n0\r\n\r\n"),
            403);
  EXPECT_FALSE(plain_saw(ph.substr(10))) << "the piece that completes the placeholder never left";
  // The same request without a placeholder passes.
  EXPECT_EQ(plain_request("POST " + plain_target("/") + " HTTP/1.1\r\n" + host + "Content-Length: 5\r\n" +
                          auth() + "\r\nhello"),
            200);
  const auto report = broker_->report();
  std::set<std::string> places;
  for (const auto& e : report.exfiltration) places.insert(e.where);
  EXPECT_TRUE(places.count("plain-HTTP request head")) << "query and header";
  EXPECT_TRUE(places.count("plain-HTTP request body"));
}

// Local servers are this machine: a harness pointed at a model server on
// localhost sends it the placeholder it holds, which is not the secret; that
// request is neither refused nor changed (docs/broker.md, "What the supervisor
// does"). The same request to a name that resolves to loopback is still refused.
TEST_F(ProxyWiringTest, APlaceholderToALocalServerPassesAsItIs) {
  start_proxy();
  const std::string ph = placeholder("github");
  const std::string port = std::to_string(plain_.port());
  EXPECT_EQ(plain_request("GET http://localhost:" + port + "/local HTTP/1.1\r\nHost: localhost:" + port +
                          "\r\nAuthorization: Bearer " + ph + "\r\n" + auth() + "\r\n"),
            200);
  const std::string body = "token=" + ph;
  EXPECT_EQ(
      plain_request("POST http://localhost:" + port + "/local HTTP/1.1\r\nHost: localhost:" + port +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + auth() + "\r\n" + body),
      200);
  EXPECT_TRUE(plain_saw("Bearer " + ph)) << "the local server got the placeholder, unchanged";
  EXPECT_FALSE(plain_saw(kGithubSecret));
  EXPECT_TRUE(broker_->report().exfiltration.empty());
  EXPECT_EQ(plain_request("GET " + plain_target("/named") + " HTTP/1.1\r\nHost: plain.test:" + port +
                          "\r\nAuthorization: Bearer " + ph + "\r\n" + auth() + "\r\n"),
            403);
}

TEST_F(ProxyWiringTest, CutEndsTerminatedConnectionsAndLogsThem) {
  start_proxy();
  const int fd = connect_to(proxy_->port());
  ASSERT_GE(fd, 0);
  const std::string target = "bound.test:" + std::to_string(upstream_->port());
  send_all(fd, "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  std::thread cutter([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    proxy_->cut();
  });
  TlsOptions options;
  options.ca_file = broker_->trust_files().bundle;
  options.timeout = std::chrono::seconds(8);
  // Keep-alive: the connection stays open after the answer, until the cut.
  const auto started = std::chrono::steady_clock::now();
  const TlsResult r =
      tls_on_socket(fd, "bound.test", "GET /echo HTTP/1.1\r\nHost: bound.test\r\n\r\n", options);
  const auto took = std::chrono::steady_clock::now() - started;
  cutter.join();
  ::close(fd);
  EXPECT_TRUE(r.handshake) << r.error;
  EXPECT_TRUE(contains(r.response, "200 OK")) << r.response;
  EXPECT_LT(took, std::chrono::seconds(6)) << "ended by the cut, not by the client's timeout";
  proxy_->stop();
  const auto lines = proxy_log("bound.test");
  ASSERT_EQ(lines.size(), 1u) << read_file(dir_ / "proxy.jsonl");
  EXPECT_EQ(lines[0]["closed"], "cut");
  EXPECT_EQ(lines[0]["inspected"], "terminated");
}

}  // namespace
}  // namespace px::broker::test
