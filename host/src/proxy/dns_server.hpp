#pragma once
// The run's DNS server, on sockets made inside the run (127.0.0.1:53 and
// [::1]:53, UDP and TCP) and served on the proxy's io thread. It answers a
// name the rule allows with the name's synthetic addresses (made, with their
// listeners, before the answer leaves), localhost with loopback, and anything
// else with NXDOMAIN or REFUSED: nothing is ever forwarded or looked up. Every
// query is a line in the proxy's log; names refused by the rule are listed at
// the end of the run. Parsing and deciding are pure (dns_message.hpp).
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::proxy {

class ServerCore;
class RunNetworkService;

class DnsServer {
 public:
  DnsServer(ServerCore& core, RunNetworkService& network);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  Status add_udp(UniqueFd fd);
  Status add_tcp(UniqueFd fd);
  void stop();

  // One query's bytes in; `reply` gets the answer's bytes, at once or once
  // the name's listeners exist. False when no answer will come (not DNS at all).
  bool handle(std::string query, std::function<void(const std::string& answer)> reply);

 private:
  class TcpClient;
  void wait_udp(boost::asio::ip::udp::socket& socket);
  void on_udp(boost::asio::ip::udp::socket& socket);
  void wait_accept(boost::asio::ip::tcp::acceptor& acceptor);

  ServerCore& core_;
  RunNetworkService& network_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // answers arriving after stop() are dropped
  std::vector<std::unique_ptr<boost::asio::ip::udp::socket>> udp_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> tcp_;
  std::vector<std::shared_ptr<TcpClient>> clients_;
};

}  // namespace px::proxy
