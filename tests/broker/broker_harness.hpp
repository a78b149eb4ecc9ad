#pragma once
// Real parts on loopback for the broker's tests: a test PKI made with the
// openssl command, an HTTPS upstream (tests/broker/upstream_server.py), a
// "front" that plays the proxy's part (a CONNECT, or a captured connection,
// then Broker::relay), and a blocking OpenSSL client.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../proxy/harness.hpp"
#include "broker/broker.hpp"
#include "test_upstream_trust.hpp"

namespace px::broker::test {

using proxy::test::CommandResult;
using proxy::test::have_tool;
using proxy::test::read_file;
using proxy::test::run_command;

struct CertFiles {
  std::filesystem::path cert, key;
};

// Made once per test process, with the openssl command.
struct TestPki {
  std::filesystem::path dir;
  std::string ca_pem;
  CertFiles server;       // bound.test, rules.test, api.anthropic.test, ws.test (signed by the test CA)
  CertFiles wrong_name;   // elsewhere.test only (signed by the test CA)
  CertFiles self_signed;  // bound.test, signed by nobody the broker trusts
  static const TestPki& get();
};

// The HTTPS upstream: python3 upstream_server.py.
class UpstreamServer {
 public:
  UpstreamServer(const CertFiles& cert, const std::filesystem::path& dir,
                 const std::filesystem::path& git_root = {}, const std::string& git_secret = {});
  ~UpstreamServer();
  std::uint16_t port() const { return port_; }
  bool running() const { return port_ != 0; }
  // What the server received, one object per request (method, path, headers, body).
  std::vector<nlohmann::json> requests() const;

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::filesystem::path record_;
};

// The proxy's part: accepts a CONNECT (answers 200) or, on the capture port,
// a connection captured for `capture_host` (of which it reads the first bytes,
// as the proxy does to find the server name, and passes them on as `early`);
// then connects to 127.0.0.1:route(host) and hands both to Broker::relay.
class Front {
 public:
  Front(std::shared_ptr<Broker> broker, std::function<std::uint16_t(const std::string&)> route,
        std::string capture_host = {});
  ~Front();
  std::uint16_t connect_port() const { return connect_port_; }
  std::uint16_t capture_port() const { return capture_port_; }
  std::vector<RelayEnd> ends() const;
  // Waits until `n` relayed connections have ended.
  bool wait_ends(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;
  std::size_t early_bytes_passed() const { return early_total_; }

 private:
  void accept(boost::asio::ip::tcp::acceptor& acceptor, bool capture);
  void handle(std::shared_ptr<boost::asio::ip::tcp::socket> socket, bool capture);
  void hand_over(boost::asio::ip::tcp::socket client, std::string early, const std::string& host,
                 std::uint16_t port);

  std::shared_ptr<Broker> broker_;
  std::function<std::uint16_t(const std::string&)> route_;
  std::string capture_host_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor connect_acceptor_{io_};
  boost::asio::ip::tcp::acceptor capture_acceptor_{io_};
  std::uint16_t connect_port_ = 0, capture_port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<RelayEnd> ends_;
  std::size_t early_total_ = 0;
};

struct TlsOptions {
  std::string sni;                // default: the CONNECT host
  std::filesystem::path ca_file;  // empty: the system store only (a client that does not trust the run CA)
  std::chrono::milliseconds timeout{8000};
};

struct TlsResult {
  bool connected = false;  // the CONNECT was answered 200
  bool handshake = false;  // the TLS handshake succeeded
  std::string error;       // why not
  std::string response;    // everything read after the handshake, until the end
};

// CONNECT host:port through the front, TLS, send `request`, read until the end.
TlsResult tls_exchange(std::uint16_t front_port, const std::string& host, std::uint16_t port,
                       const std::string& request, const TlsOptions& options);

// TLS on a connected socket (no CONNECT): send `request`, read until the end.
TlsResult tls_on_socket(int fd, const std::string& sni, const std::string& request,
                        const TlsOptions& options);

// Runs `argv` with `env` ("NAME=value" set, "-NAME" removed) through env(1),
// so that the values given win over the test's own environment (which may
// already point SSL_CERT_FILE, NODE_EXTRA_CA_CERTS or GIT_SSL_CAINFO somewhere).
CommandResult run_with_env(const std::vector<std::string>& env, const std::vector<std::string>& argv);

std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& p);
std::filesystem::path temp_dir(const std::string& name);
// Writes `content` to `path` with `mode`.
void write_file(const std::filesystem::path& path, const std::string& content, int mode = 0600);

// The test secrets: well-formed, obviously fake.
inline const std::string kGithubSecret = "ghp_TESTs3cretTESTs3cretTESTs3cret012345";
inline const std::string kAnthropicSecret =
    "sk-ant-api03-TESTs3cretTESTs3cretTESTs3cretTESTs3cretTESTs3cretTESTs3cretTESTs3cretTESTs3cret-"
    "AbCdEfGhAA";

class BrokerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // A broker with two credentials and request rules (see the .cpp), its front,
  // and `tweak` applied to the configuration first.
  void start(const std::function<void(BrokerConfig&)>& tweak = {});
  std::string placeholder(const std::string& credential) const;
  std::vector<nlohmann::json> log_lines() const { return read_json_lines(dir_ / "requests.jsonl"); }
  // The route every test name takes: the upstream server, unless overridden.
  std::uint16_t route(const std::string& host) const;

  std::filesystem::path dir_;
  std::unique_ptr<UpstreamServer> upstream_;
  std::map<std::string, std::uint16_t> routes_;
  std::shared_ptr<Broker> broker_;
  std::unique_ptr<Front> front_;
};

}  // namespace px::broker::test
