// The proxy server end to end on loopback, against a real upstream.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy::test {
namespace {

using namespace std::chrono_literals;

// A raw upstream's listening socket on 127.0.0.1 (the test speaks for it).
int listen_on_loopback(std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0) return -1;
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

TEST_F(ProxyTest, ConnectCarriesBytesBothWays) {
  start();
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  const std::string established = read_until(fd, "\r\n\r\n");
  EXPECT_EQ(established, "HTTP/1.1 200 Connection Established\r\n\r\n");
  // 4 MiB each way, written while reading, so both directions are busy.
  std::string payload(4 << 20, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 % 251);
  std::thread writer([&] { send_all(fd, payload); });
  std::string echoed;
  char buf[65536];
  while (echoed.size() < payload.size()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    echoed.append(buf, static_cast<std::size_t>(n));
  }
  writer.join();
  EXPECT_TRUE(echoed == payload);
  ::shutdown(fd, SHUT_WR);
  EXPECT_EQ(read_until(fd, {}, 2s), "");  // the upstream's EOF comes back
  ::close(fd);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["verdict"], "allowed");
  EXPECT_EQ(lines[0]["method"], "CONNECT");
  EXPECT_EQ(lines[0]["host"], "allowed.test");
  EXPECT_EQ(lines[0]["port"], echo_.port());
  EXPECT_EQ(lines[0]["bytes_up"], payload.size());
  EXPECT_EQ(lines[0]["bytes_down"], payload.size());
  EXPECT_EQ(lines[0]["closed"], "eof");
  EXPECT_EQ(lines[0]["address"], "127.0.0.1");
  for (const char* key : {"time", "reason", "duration_ms", "status"}) EXPECT_TRUE(lines[0].contains(key)) << key;
}

TEST_F(ProxyTest, BytesSentWithTheConnectRequestFollowTheTunnelsAnswer) {
  // One write: the request and the tunnel's first bytes. The 200 goes out
  // first, then those bytes upstream, and the echo comes back after the 200.
  start();
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() +
                   "\r\nearly bytes\n");
  EXPECT_EQ(read_until(fd, "early bytes\n"), "HTTP/1.1 200 Connection Established\r\n\r\nearly bytes\n");
  send_all(fd, "then more\n");
  EXPECT_EQ(read_until(fd, "more\n"), "then more\n");
  ::close(fd);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["verdict"], "allowed");
  EXPECT_EQ(lines[0]["bytes_up"], 22);
  EXPECT_EQ(lines[0]["bytes_down"], 22);
}

TEST_F(ProxyTest, ConnectGoesToTheNextCheckedAddressAndAnswers502WhenNoneTakesIt) {
  // Nothing listens on 127.0.0.2 (the upstreams bind 127.0.0.1): refused at
  // once, so the next address checked is tried; with none left, a 502.
  const auto dir = temp_dir("proxy-next-address");
  ProxyConfig c;
  c.mode = NetworkMode::allowlist;
  c.allowed_hosts = {"two.test", "none.test"};
  c.allowed_ports = {echo_.port()};
  c.local_servers = true;
  c.password = kPassword;
  c.log_path = dir / "proxy.jsonl";
  Resolver resolver = [](const std::string& host) -> Result<std::vector<boost::asio::ip::address>> {
    std::vector<boost::asio::ip::address> out{boost::asio::ip::make_address("127.0.0.2")};
    if (host == "two.test") out.push_back(boost::asio::ip::make_address("127.0.0.1"));
    return out;
  };
  auto server = ProxyServer::listen(c, "127.0.0.1", 0, resolver);
  ASSERT_TRUE(server) << server.error().message;
  const std::uint16_t port = server.value()->port();
  const std::string target = ":" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n";

  const int fd = connect_to(port);
  ASSERT_GE(fd, 0);
  send_all(fd, "CONNECT two.test" + target);
  EXPECT_EQ(read_until(fd, "\r\n\r\n"), "HTTP/1.1 200 Connection Established\r\n\r\n");
  send_all(fd, "ping\n");
  EXPECT_EQ(read_until(fd, "\n"), "ping\n");
  ::close(fd);

  const std::string resp = roundtrip(port, "CONNECT none.test" + target);
  EXPECT_EQ(status_of(resp), 502) << resp;
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::connect_failed);
  server.value()->stop();
  std::vector<nlohmann::json> lines;
  std::istringstream in(read_file(dir / "proxy.jsonl"));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  const auto& two = lines[0]["host"] == "two.test" ? lines[0] : lines[1];
  const auto& none = lines[0]["host"] == "two.test" ? lines[1] : lines[0];
  EXPECT_EQ(two["verdict"], "allowed");
  EXPECT_EQ(two["address"], "127.0.0.1");
  EXPECT_EQ(none["verdict"], "failed");
  EXPECT_EQ(none["reason"], reason::connect_failed);
  std::filesystem::remove_all(dir);
}

TEST_F(ProxyTest, PlainHttpIsForwardedWithoutProxyHeaders) {
  start();
  const std::string resp = roundtrip(
      port_, "POST http://allowed.test:" + std::to_string(http_.port()) +
                 "/path?q=1 HTTP/1.1\r\nHost: evil.test\r\n" + auth() +
                 "Proxy-Connection: keep-alive\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Content-Length: 5\r\n\r\nhello");
  EXPECT_EQ(status_of(resp), 200) << resp;
  EXPECT_NE(resp.find("hello from upstream"), std::string::npos);
  const auto reqs = http_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0], "POST /path?q=1 HTTP/1.1\r\nHost: allowed.test:" + std::to_string(http_.port()) +
                         "\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  EXPECT_EQ(reqs[0].find(kPassword), std::string::npos);
}

TEST_F(ProxyTest, ChunkedBodyIsForwardedExactlyAndNothingAfterIt) {
  start();
  const std::string body = "5\r\nhello\r\n0\r\n\r\n";
  const std::string resp =
      roundtrip(port_, "POST http://allowed.test:" + std::to_string(http_.port()) + "/ HTTP/1.1\r\n" + auth() +
                          "Transfer-Encoding: chunked\r\n\r\n" + body +
                          "GET http://evil.test/ HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 200) << resp;
  const auto reqs = http_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].substr(reqs[0].find("\r\n\r\n") + 4), body);
  EXPECT_EQ(resolver_.asked(), std::vector<std::string>{"allowed.test"});
}

TEST_F(ProxyTest, AdoptsAListeningSocket) {
  std::uint16_t port = 0;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  port = ntohs(sin.sin_port);

  ProxyConfig c;
  c.mode = NetworkMode::allowlist;
  c.allowed_hosts = {"allowed.test"};
  c.allowed_ports = {http_.port()};
  c.local_servers = true;
  c.password = kPassword;
  // Not listening yet: refused with a message that says what to do.
  const int dup = ::dup(fd);
  auto bad = ProxyServer::adopt(c, UniqueFd(dup), resolver_.resolver());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("listen()"), std::string::npos);
  ASSERT_EQ(::listen(fd, 16), 0);
  auto server = ProxyServer::adopt(c, UniqueFd(fd), resolver_.resolver());
  ASSERT_TRUE(server) << server.error().message;
  EXPECT_EQ(server.value()->port(), port);
  const std::string resp = roundtrip(port, "GET http://allowed.test:" + std::to_string(http_.port()) +
                                              "/ HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 200) << resp;
}

TEST_F(ProxyTest, CutClosesTunnelsAndRefusesUntilRestore) {
  start();
  const int fd = connect_to(port_);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  send_all(fd, "ping");
  EXPECT_EQ(read_until(fd, "ping"), "ping");
  proxy_->cut();
  EXPECT_TRUE(proxy_->is_cut());
  EXPECT_EQ(read_until(fd, {}, 2s), "");  // closed by the cut
  ::close(fd);
  const std::string connect = "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n";
  std::string resp = roundtrip(port_, connect);
  EXPECT_EQ(status_of(resp), 403);
  EXPECT_EQ(header_of(resp, "x-proxy-error"), "paused");
  proxy_->restore();
  const int fd2 = connect_to(port_);
  send_all(fd2, connect);
  EXPECT_EQ(status_of(read_until(fd2, "\r\n\r\n")), 200);
  ::close(fd2);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0]["closed"], "cut");
  EXPECT_EQ(lines[1]["verdict"], "paused");
}

TEST_F(ProxyTest, StopClosesEverythingAndIsIdempotent) {
  start();
  const int fd = connect_to(port_);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  const int idle = connect_to(port_);  // never sends a byte
  proxy_->stop();
  proxy_->stop();
  EXPECT_EQ(read_until(fd, {}, 2s), "");
  EXPECT_EQ(read_until(idle, {}, 2s), "");
  EXPECT_LT(connect_to(port_), 0);
  ::close(fd);
  ::close(idle);
}

TEST_F(ProxyTest, RebindingToLocalAddressIsRefusedWithoutLocalServers) {
  start([](ProxyConfig& c) { c.local_servers = false; });
  const std::string resp = roundtrip(port_, "CONNECT rebind.allowed.test:" + std::to_string(echo_.port()) +
                                               " HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 403);
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::local_address);
  EXPECT_EQ(echo_.connections(), 0);
  EXPECT_EQ(resolver_.asked(), std::vector<std::string>{"rebind.allowed.test"});
  const std::string local = roundtrip(port_, "CONNECT localhost:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(header_of(local, "x-proxy-error"), reason::local_servers_off);
  proxy_->stop();
  const auto refused = proxy_->refused_hosts();
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_TRUE(std::any_of(refused.begin(), refused.end(), [](const auto& r) { return r.host == "rebind.allowed.test"; }));
  const auto lines = log_lines();
  EXPECT_EQ(lines[0]["address"], "127.0.0.1 (loopback)");
}

// 127.0.0.1 and [::1] are this machine, like localhost: with Local servers on
// they reach its servers (CONNECT and plain HTTP alike), with it off they stay
// refused as IP literals. Either way the log keeps host and port apart.
TEST_F(ProxyTest, LoopbackLiteralsAreLocalhostUnderLocalServers) {
  start();
  const std::string echo = std::to_string(echo_.port());
  const int fd = connect_to(port_);
  send_all(fd, "CONNECT 127.0.0.1:" + echo + " HTTP/1.1\r\nHost: 127.0.0.1:" + echo + "\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  send_all(fd, "ping");
  EXPECT_EQ(read_until(fd, "ping"), "ping");
  ::close(fd);
  const std::string page = roundtrip(port_, "GET http://127.0.0.1:" + std::to_string(http_.port()) +
                                                "/page.html?q=1 HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(page), 200) << page;
  ASSERT_EQ(http_.requests().size(), 1u);
  EXPECT_EQ(http_.requests()[0].rfind("GET /page.html?q=1 HTTP/1.1", 0), 0u) << http_.requests()[0];
  EXPECT_TRUE(resolver_.asked().empty());
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  // A tunnel's line is written when it closes, which may be after the plain
  // request's: the lines in either order.
  std::set<std::pair<std::string, int>> logged;  // host, port
  for (const auto& l : lines) logged.insert({l["host"].get<std::string>(), l["port"].get<int>()});
  EXPECT_EQ(logged, (std::set<std::pair<std::string, int>>{{"127.0.0.1", echo_.port()},
                                                           {"127.0.0.1", http_.port()}}));
}

TEST_F(ProxyTest, LoopbackLiteralsStayRefusedWithoutLocalServers) {
  start([](ProxyConfig& c) { c.local_servers = false; });
  const std::string connect =
      roundtrip(port_, "CONNECT 127.0.0.1:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(header_of(connect, "x-proxy-error"), reason::ip_literal);
  const std::string plain = roundtrip(
      port_, "GET http://[::1]:" + std::to_string(http_.port()) + "/page.html HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(header_of(plain, "x-proxy-error"), reason::ip_literal);
  EXPECT_EQ(echo_.connections() + http_.connections(), 0);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  // Host and port as the fields they are, never "127.0.0.1:PORT" with port 0, never a URL.
  EXPECT_EQ(lines[0]["host"], "127.0.0.1");
  EXPECT_EQ(lines[0]["port"], echo_.port());
  EXPECT_EQ(lines[1]["host"], "[::1]");
  EXPECT_EQ(lines[1]["port"], http_.port());
}

TEST_F(ProxyTest, LocalServersForwardLocalhostOnAnyPort) {
  start([](ProxyConfig& c) { c.allowed_ports = {443}; c.allowed_hosts = {}; });
  const int fd = connect_to(port_);
  send_all(fd, "CONNECT localhost:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  send_all(fd, "abc");
  EXPECT_EQ(read_until(fd, "abc"), "abc");
  ::close(fd);
  EXPECT_TRUE(resolver_.asked().empty());  // localhost never goes to a resolver
}

TEST_F(ProxyTest, OfflineAndOnlineModes) {
  start([](ProxyConfig& c) { c.mode = NetworkMode::offline; });
  std::string resp = roundtrip(port_, "CONNECT allowed.test:443 HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::offline);
  proxy_.reset();
  start([](ProxyConfig& c) { c.mode = NetworkMode::online; c.allowed_hosts = {}; });
  resp = roundtrip(port_, "GET http://sub.allowed.test:" + std::to_string(http_.port()) + "/ HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 200);
  resp = roundtrip(port_, "GET http://unknown.test:" + std::to_string(http_.port()) + "/ HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 502);
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::resolve_failed);
}

TEST_F(ProxyTest, HeaderTimeoutAndIdleTimeout) {
  start([](ProxyConfig& c) {
    c.limits.header_timeout = 300ms;
    c.limits.idle_timeout = 300ms;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const int slow = connect_to(port_);
  send_all(slow, "CONN");  // slowloris: a few bytes, then nothing
  const std::string resp = read_until(slow, {}, 3s);
  EXPECT_EQ(status_of(resp), 408);
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::header_timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  ::close(slow);
  const int fd = connect_to(port_);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  EXPECT_EQ(read_until(fd, {}, 3s), "");  // idle: closed
  ::close(fd);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["closed"], "idle-timeout");
}

TEST_F(ProxyTest, ConnectionCapAnswers503AndOthersStillWork) {
  start([](ProxyConfig& c) { c.limits.max_connections = 4; });
  std::vector<int> hogs;
  for (int i = 0; i < 4; ++i) hogs.push_back(connect_to(port_));
  std::this_thread::sleep_for(100ms);
  const std::string resp = roundtrip(port_, "CONNECT allowed.test:443 HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 503);
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::too_many_connections);
  ::close(hogs.back());
  hogs.pop_back();
  std::this_thread::sleep_for(100ms);
  const std::string ok = roundtrip(port_, "GET http://allowed.test:" + std::to_string(http_.port()) + "/ HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(ok), 200);
  for (int fd : hogs) ::close(fd);
}

// A request without the password gets the 407 challenge; a client that asks
// again with it (git, Codex) was not refused anything. One that never does was.
TEST_F(ProxyTest, AnAnsweredChallengeIsNoRefusal) {
  start();
  const std::string echo = std::to_string(echo_.port());
  EXPECT_EQ(status_of(roundtrip(port_, "CONNECT allowed.test:" + echo + " HTTP/1.1\r\n\r\n")), 407);
  const int tunnel = connect_to(port_);
  send_all(tunnel, "CONNECT allowed.test:" + echo + " HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(read_until(tunnel, "\r\n\r\n")), 200);
  ::close(tunnel);
  EXPECT_EQ(status_of(roundtrip(port_, "CONNECT never.allowed.test:" + echo + " HTTP/1.1\r\n\r\n")), 407);
  proxy_->stop();
  const auto refused = proxy_->refused_hosts();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].host, "never.allowed.test:" + echo);
  EXPECT_EQ(refused[0].reason, reason::auth_required);
}

TEST_F(ProxyTest, WrongPasswordsAreSlowedDown) {
  start();
  const std::string wrong = "CONNECT allowed.test:443 HTTP/1.1\r\nProxy-Authorization: " + basic_auth("px", "nope") + "\r\n\r\n";
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(status_of(roundtrip(port_, wrong)), 407);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 600ms);  // 100 + 200 + 300 ms
}

TEST_F(ProxyTest, LogEscapesControlCharactersAndNeverHoldsThePassword) {
  start();
  roundtrip(port_, "CONNECT evil\x01\x1b[31m:443 HTTP/1.1\r\n" + auth() + "\r\n");
  roundtrip(port_, "CONNECT evil.test:443 HTTP/1.1\r\n" + auth() + "X: \xff\xfe\r\n\r\n");
  roundtrip(port_, "GET http://evil.test/ HTTP/1.1\r\nProxy-Authorization: " + basic_auth("px", kPassword + "x") + "\r\n\r\n");
  proxy_->stop();
  const std::string raw = read_file(dir_ / "proxy.jsonl");
  EXPECT_EQ(raw.find('\x1b'), std::string::npos);
  EXPECT_EQ(raw.find(kPassword), std::string::npos);
  EXPECT_EQ(raw.find(basic_auth("px", kPassword).substr(6)), std::string::npos);
  EXPECT_EQ(log_lines().size(), 3u);
  struct stat st{};
  ASSERT_EQ(::stat((dir_ / "proxy.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ProxyTest, HostPortRulesOpenTheirPortOnly) {
  start([&](ProxyConfig& c) {
    c.allowed_hosts = {"allowed.test:" + std::to_string(echo_.port())};
    c.allowed_ports = {http_.port()};  // for hosts without a port: none here
  });
  const auto connect = [&](std::uint16_t port) {
    return roundtrip(
        port_, "CONNECT sub.allowed.test:" + std::to_string(port) + " HTTP/1.1\r\n" + auth() + "\r\n", 1s);
  };
  EXPECT_EQ(status_of(connect(echo_.port())), 200);
  const std::string refused = connect(http_.port());
  EXPECT_EQ(status_of(refused), 403);
  EXPECT_EQ(header_of(refused, "x-proxy-error"), reason::port_not_allowed);
}

TEST_F(ProxyTest, AnEndlessUpstreamResponseHeadIsAnswered502) {
  // An upstream that answers with a header that never ends.
  std::uint16_t port = 0;
  const int lfd = listen_on_loopback(port);
  ASSERT_GE(lfd, 0);
  std::atomic<std::size_t> sent{0};
  std::thread upstream([&] {
    const int c = ::accept(lfd, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    [[maybe_unused]] auto r = ::read(c, buf, sizeof buf);
    std::string head = "HTTP/1.1 200 OK\r\nX-Endless: ";
    send_all(c, head);
    const std::string chunk(4096, 'a');
    for (int i = 0; i < 256 && send_all(c, chunk); ++i) sent += chunk.size();
    ::close(c);
  });
  start([&](ProxyConfig& c) {
    c.allowed_ports = {port};
    c.limits.max_response_head = 16 * 1024;
  });
  const std::string resp = roundtrip(
      port_, "GET http://allowed.test:" + std::to_string(port) + "/ HTTP/1.1\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(resp), 502) << resp.substr(0, 200);
  EXPECT_EQ(header_of(resp, "x-proxy-error"), reason::response_head_too_large);
  EXPECT_EQ(resp.find("X-Endless"), std::string::npos) << "nothing of the head was relayed";
  upstream.join();
  ::close(lfd);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["verdict"], "failed");
  EXPECT_EQ(lines[0]["reason"], reason::response_head_too_large);
  EXPECT_EQ(lines[0]["status"], 502);
}

TEST_F(ProxyTest, AResponseHeadSplitAcrossReadsIsRelayedWhole) {
  std::uint16_t port = 0;
  const int lfd = listen_on_loopback(port);
  ASSERT_GE(lfd, 0);
  std::thread upstream([&] {
    const int c = ::accept(lfd, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    [[maybe_unused]] auto r = ::read(c, buf, sizeof buf);
    // The blank line arrives in two pieces, the body after a pause.
    for (const char* piece : {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r", "\nbo", "dy"}) {
      send_all(c, piece);
      std::this_thread::sleep_for(50ms);
    }
    ::close(c);
  });
  start([&](ProxyConfig& c) { c.allowed_ports = {port}; });
  const std::string resp = roundtrip(
      port_, "GET http://allowed.test:" + std::to_string(port) + "/ HTTP/1.1\r\n" + auth() + "\r\n");
  upstream.join();
  ::close(lfd);
  EXPECT_EQ(resp, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody");
}

TEST(ProxyConfigTest, RefusesUnusableConfigs) {
  ProxyConfig c;
  c.password = "short";
  EXPECT_FALSE(validate(c));
  c.password = kPassword;
  c.mode = NetworkMode::online;
  c.allowed_hosts = {"a.test"};
  EXPECT_FALSE(validate(c));
  c.mode = NetworkMode::allowlist;
  c.allowed_hosts = {"A.test.", "a.test", "b.test", "b.test:22", "*.c.test:5432"};
  auto v = validate(c);
  ASSERT_TRUE(v);
  EXPECT_EQ(v.value().allowed_hosts,
            (std::vector<std::string>{"*.c.test:5432", "a.test", "b.test", "b.test:22"}));
  for (const char* bad : {"127.0.0.1", "com", "*.co.uk", "a.test:0", "a.test:1-2", "http://a.test"}) {
    c.allowed_hosts = {bad};
    EXPECT_FALSE(validate(c)) << bad;
  }
  ProxyConfig good;
  good.mode = NetworkMode::allowlist;
  good.password = kPassword;
  auto bound = ProxyServer::listen(good, "not-an-ip", 0);
  ASSERT_FALSE(bound);
  EXPECT_NE(bound.error().message.find("not-an-ip"), std::string::npos);
}

TEST(Password, GeneratedWrittenAndRead) {
  const auto a = generate_password().value();
  const auto b = generate_password().value();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  const auto dir = temp_dir("pw");
  const auto file = dir / "pw";
  ASSERT_TRUE(write_password_file(file, a));
  struct stat st{};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_password_file(file).value(), a);
  EXPECT_FALSE(write_password_file(file, a));  // never overwrites
  ::chmod(file.c_str(), 0644);
  auto loose = read_password_file(file);
  ASSERT_FALSE(loose);
  EXPECT_EQ(loose.error().message.find(a), std::string::npos);
  EXPECT_NE(loose.error().message.find("chmod 600"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Environment, ProxyVariablesForTheChild) {
  const auto env = proxy_environment(3128, kPassword);
  std::map<std::string, std::string> m(env.begin(), env.end());
  const std::string url = "http://px:" + kPassword + "@127.0.0.1:3128";
  for (const char* k : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}) {
    EXPECT_EQ(m[k], url) << k;
  }
  EXPECT_EQ(m["NO_PROXY"], "localhost,127.0.0.1,::1");
  EXPECT_EQ(m["GIT_CONFIG_KEY_0"], "http.proxy");
  EXPECT_EQ(m["GIT_CONFIG_VALUE_0"], url);
}

}  // namespace
}  // namespace px::proxy::test

namespace px::proxy::test {
namespace {

// escape-list (a) 12: the supervisor starts sealed children, so none of the
// proxy's sockets (listening, client, upstream) may be inheritable.
TEST_F(ProxyTest, EverySocketIsCloseOnExec) {
  start();
  const int fd = connect_to(port_);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(status_of(read_until(fd, "\r\n\r\n")), 200);
  int sockets = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (ec || target.rfind("socket:", 0) != 0) continue;
    const int n = std::stoi(entry.path().filename().string());
    ++sockets;
    EXPECT_NE(::fcntl(n, F_GETFD) & FD_CLOEXEC, 0) << "fd " << n << " is inheritable";
  }
  EXPECT_GE(sockets, 5);  // listener, client (both ends), upstream (both ends)
  ::close(fd);
}

}  // namespace
}  // namespace px::proxy::test
