// The ClientHello check of CONNECT tunnels: the parser against real
// ClientHellos sent by `openssl s_client`, and the proxy closing a tunnel
// whose TLS client asks for another server than the one it CONNECTed to.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "proxy/tls_sni.hpp"

using namespace px::proxy;
using namespace px::proxy::test;
using namespace std::chrono_literals;

namespace {

// Listens on loopback, accepts one connection and returns the first bytes the
// client sent (a ClientHello when the client is `openssl s_client`).
std::string capture_client_hello(const std::vector<std::string>& extra_args) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(listener, 1);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  std::vector<std::string> argv{"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(ntohs(a.sin_port))};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::thread client([argv] { (void)run_command(argv); });
  std::string hello;
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) {
    hello = read_until(fd, std::string(1, '\xff') + "never", 1s);  // whatever arrives within a second
    ::close(fd);
  }
  ::close(listener);
  client.join();
  return hello;
}

}  // namespace

TEST(TlsSni, ReadsTheServerNameOfARealClientHello) {
  if (!have_tool("openssl")) GTEST_SKIP() << "openssl is not installed";
  const std::string hello = capture_client_hello({"-servername", "api.example.org"});
  ASSERT_GT(hello.size(), 40u);
  const auto r = read_client_hello_sni(hello);
  EXPECT_EQ(r.status, ClientHelloSni::Status::found);
  EXPECT_EQ(r.host, "api.example.org");
  // Any prefix of it asks for more bytes, never a wrong answer.
  for (std::size_t n : {std::size_t{1}, std::size_t{4}, std::size_t{5}, std::size_t{20}, hello.size() / 2,
                        hello.size() - 1})
    EXPECT_EQ(read_client_hello_sni(hello.substr(0, n)).status, ClientHelloSni::Status::need_more) << n;
  // Corrupted lengths are malformed, not a crash or a guess.
  std::string broken = hello;
  broken[5] = 0x02;  // not a ClientHello
  EXPECT_EQ(read_client_hello_sni(broken).status, ClientHelloSni::Status::malformed);

  const std::string without = capture_client_hello({"-noservername"});
  ASSERT_GT(without.size(), 40u);
  EXPECT_EQ(read_client_hello_sni(without).status, ClientHelloSni::Status::no_sni);
}

TEST(TlsSni, OtherProtocolsAndMatching) {
  EXPECT_EQ(read_client_hello_sni("SSH-2.0-OpenSSH_9.2\r\n").status, ClientHelloSni::Status::not_tls);
  EXPECT_EQ(read_client_hello_sni("").status, ClientHelloSni::Status::need_more);
  EXPECT_EQ(read_client_hello_sni(std::string("\x16\x03\x01\x00\x00", 5)).status, ClientHelloSni::Status::malformed);
  EXPECT_TRUE(sni_matches("API.Example.org", "api.example.org."));
  EXPECT_TRUE(sni_matches("example.org.", "example.org"));
  EXPECT_FALSE(sni_matches("evil.example.org", "example.org"));
  EXPECT_FALSE(sni_matches("example.org.evil", "example.org"));
}

TEST_F(ProxyTest, TunnelWhoseTlsClientAsksForAnotherServerIsClosed) {
  if (!have_tool("openssl")) GTEST_SKIP() << "openssl is not installed";
  start();
  const std::string target = "allowed.test:" + std::to_string(echo_.port());
  auto s_client = [&](const std::string& servername) {
    return run_command({"timeout", "10", "openssl", "s_client", "-connect", target, "-proxy",
                        "127.0.0.1:" + std::to_string(port_), "-proxy_user", "px", "-proxy_pass",
                        "pass:" + kPassword, "-servername", servername},
                       {});
  };
  // Fronting: CONNECT to the allowed host, TLS for another one behind it.
  (void)s_client("evil.example");
  // The right name goes through (the echo server is no TLS server, so the
  // handshake itself fails after the ClientHello went through and came back).
  (void)s_client("allowed.test");
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["verdict"], "denied");
  EXPECT_EQ(lines[0]["reason"], "sni-mismatch");
  EXPECT_EQ(lines[0]["status"], 200);  // the tunnel was opened, then closed at the ClientHello
  EXPECT_EQ(lines[1]["verdict"], "allowed");
  EXPECT_GT(lines[1]["bytes_up"].get<int>(), 40);
  EXPECT_GT(lines[1]["bytes_down"].get<int>(), 40) << "the ClientHello reached the echo server and came back";
  const auto refused = proxy_->refused_hosts();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].host, "allowed.test");
}

TEST_F(ProxyTest, NonTlsTunnelsAndServerFirstProtocolsPass) {
  start();
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  send_all(fd, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(read_until(fd, "\r\n\r\n"), "HTTP/1.1 200 Connection Established\r\n\r\n");
  send_all(fd, "SSH-2.0-test\r\n");
  EXPECT_EQ(read_until(fd, "\r\n", 3s), "SSH-2.0-test\r\n");
  ::close(fd);
  // A slow ClientHello, one byte at a time, is still read whole and checked.
  const std::string hello = have_tool("openssl") ? capture_client_hello({"-servername", "evil.example"}) : "";
  if (hello.empty()) return;
  const int slow = connect_to(port_);
  send_all(slow, "CONNECT allowed.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\n" + auth() + "\r\n");
  ASSERT_EQ(read_until(slow, "\r\n\r\n"), "HTTP/1.1 200 Connection Established\r\n\r\n");
  for (char c : hello) {
    if (!send_all(slow, std::string(1, c))) break;
  }
  EXPECT_EQ(read_until(slow, {}, 3s), "") << "closed without a byte of the upstream";
  ::close(slow);
  proxy_->stop();
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["verdict"], "allowed");
  EXPECT_EQ(lines[1]["reason"], "sni-mismatch");
}
