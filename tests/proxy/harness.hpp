#pragma once
// Real sockets on loopback: an upstream server, a raw client, a resolver that
// records every name it is asked, and a proxy fixture.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "proxy/proxy.hpp"

namespace px::proxy::test {

// An upstream on 127.0.0.1. echo: sends back every byte. http: reads one
// request (Content-Length or chunked body), records it, answers 200 with the
// body "hello from upstream", and closes.
class Upstream {
 public:
  enum class Mode { echo, http };
  explicit Upstream(Mode mode);
  ~Upstream();
  std::uint16_t port() const { return port_; }
  std::vector<std::string> requests() const;
  int connections() const { return connections_.load(); }

 private:
  void serve(int fd);
  Mode mode_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
};

class RecordingResolver {
 public:
  // Every name in `names` resolves to `address`; others fail.
  RecordingResolver(std::vector<std::string> names, std::string address);
  Resolver resolver();
  std::vector<std::string> asked() const;

 private:
  struct State {
    std::vector<std::string> names;
    std::string address;
    mutable std::mutex mutex;
    std::vector<std::string> asked;
  };
  std::shared_ptr<State> state_;
};

int connect_to(std::uint16_t port);
// Sends `bytes`, then reads until `needle` (empty: no needle), EOF or `timeout`.
std::string roundtrip(std::uint16_t port, const std::string& bytes,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5),
                      const std::string& needle = {});
bool send_all(int fd, const std::string& bytes);
// Reads until `needle` is seen, EOF or timeout.
std::string read_until(int fd, const std::string& needle,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5));
int status_of(const std::string& response);
std::string header_of(const std::string& response, const std::string& name);
std::string basic_auth(const std::string& user, const std::string& password);
std::string read_file(const std::filesystem::path& p);
std::filesystem::path temp_dir(const std::string& name);
// Runs a command line (no shell), returns exit status and output.
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {});
bool have_tool(const std::string& name);

inline const std::string kPassword = "0123456789abcdef0123456789abcdef";

class ProxyTest : public ::testing::Test {
 protected:
  // Defaults: allowlist of allowed.test, Local servers on (the upstream is on
  // loopback), ports = the upstream's.
  void start(const std::function<void(ProxyConfig&)>& tweak = {});
  // The proxy stops before its folder (its log) goes; the folder is kept when the test failed.
  void TearDown() override;
  std::string auth() const { return "Proxy-Authorization: " + basic_auth("px", kPassword) + "\r\n"; }
  std::vector<nlohmann::json> log_lines() const;

  Upstream http_{Upstream::Mode::http};
  Upstream echo_{Upstream::Mode::echo};
  RecordingResolver resolver_{{"allowed.test", "sub.allowed.test", "rebind.allowed.test", "gitsrv.test"},
                              "127.0.0.1"};
  std::filesystem::path dir_;
  std::unique_ptr<ProxyServer> proxy_;
  std::uint16_t port_ = 0;
};

}  // namespace px::proxy::test
