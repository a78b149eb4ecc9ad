#pragma once
// Local servers, both ways (io thread only):
//   mirrored   with Local servers on, every TCP port listening on this
//              machine's loopback (or on every address) gets a listener on
//              the run's own 127.0.0.1 and ::1, so that a program inside that
//              ignores proxy variables reaches it as localhost:PORT. Scanned
//              from /proc/net/tcp{,6} every second: ports that close on the
//              host close inside, new ones appear. A port the run already
//              uses itself is left to the run.
//   published  `--publish PORT[:HOSTPORT]`: a listener on this machine's
//              127.0.0.1:HOSTPORT whose connections go to the run's own
//              localhost:PORT (made inside the run by the seal's init).
// Each connection is a Connection (captured or published) and is logged.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "common/error.hpp"
#include "proxy/proxy.hpp"

namespace px::proxy {

class ServerCore;
class RunNetworkService;

// The ports listening on loopback or the wildcard address in a
// /proc/net/tcp or /proc/net/tcp6 text (pure, for tests).
std::set<std::uint16_t> listening_loopback_ports(std::string_view proc_net_tcp, bool v6);

class LocalPorts {
 public:
  LocalPorts(ServerCore& core, RunNetworkService& network, bool mirror,
             std::vector<RunNetwork::Published> published);
  ~LocalPorts();
  Status start();
  void stop();
  // Ready once the first scan's listeners are made (at once without mirroring):
  // the run's command starts after it, so localhost:PORT works from its first instant.
  std::shared_future<void> first_scan() const { return first_scan_done_; }

 private:
  void scan();
  void schedule();
  void accept_published(boost::asio::ip::tcp::acceptor& acceptor, std::uint16_t inside);

  ServerCore& core_;
  RunNetworkService& network_;
  bool mirror_;
  std::vector<RunNetwork::Published> published_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> host_listeners_;
  boost::asio::steady_timer timer_;
  // Mirrored port -> its listeners inside the run (nullptr while being made).
  std::map<std::uint16_t, std::vector<boost::asio::ip::tcp::acceptor*>> mirrored_;
  std::set<std::uint16_t> refused_;  // the run holds it, or it failed: retried once it closes on the host
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::promise<void> first_scan_;
  std::shared_future<void> first_scan_done_ = first_scan_.get_future().share();
  int first_scan_pending_ = -1;  // requests of the first scan still unanswered; -1 once it is done
  void first_scan_answered();
};

}  // namespace px::proxy
