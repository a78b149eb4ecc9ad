#pragma once
// A sealed run's network inside the proxy (io thread only): the synthetic
// names the run's DNS hands out, the listening sockets that capture the
// connections programs make to them, the run's DNS itself, and Local servers
// both ways. The listening sockets are made inside the run by the seal's init
// on request (SocketChannel); connections accepted on them become captured
// Connections, which take the same decision as a CONNECT.
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "proxy/proxy.hpp"
#include "proxy/socket_channel.hpp"
#include "proxy/synthetic_names.hpp"

namespace px::proxy {

class ServerCore;
class DnsServer;
class LocalPorts;

class RunNetworkService {
 public:
  // `done(entry, reason)`: the name's entry once its listeners are made, or
  // nullptr and the reason constant why not (too-many-names, capture-failed).
  using NameReady = std::function<void(const SyntheticNames::Entry* entry, std::string_view reason)>;

  RunNetworkService(ServerCore& core, RunNetwork network);
  ~RunNetworkService();
  RunNetworkService(const RunNetworkService&) = delete;
  RunNetworkService& operator=(const RunNetworkService&) = delete;

  Status start();
  void stop();
  // Ready once the listeners the command may use from its first instant exist
  // (the mirrored host ports).
  std::shared_future<void> ready() const;

  // An allowed name's synthetic addresses, with a listener on each of its
  // allowed ports made inside the run before `done` is called.
  void ensure_name(const std::string& name, NameReady done);
  const SyntheticNames& names() const { return names_; }
  SocketChannel& channel() { return channel_; }
  bool has_ipv6() const { return names_.ranges().v6_prefix.has_value(); }

  // Starts accepting on a listening socket made inside the run; each
  // connection is captured to `target(local endpoint)`, or reset when that
  // gives no host.
  using TargetOf = std::function<HostPort(const boost::asio::ip::tcp::endpoint& local)>;
  boost::asio::ip::tcp::acceptor* adopt_listener(UniqueFd fd, TargetOf target);
  void close_listener(boost::asio::ip::tcp::acceptor* acceptor);

 private:
  struct Pending {
    enum class State { making, ready } state = State::making;
    std::vector<NameReady> waiters;
  };
  struct Listener {
    std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor;
    TargetOf target;
    // Where it listens: a connection accepted on a listener bound to one
    // address arrived at that address (no getsockname per connection).
    boost::asio::ip::tcp::endpoint local;
  };
  void accept(Listener& listener);
  void names_made(const std::string& name, Result<std::vector<UniqueFd>> made);

  ServerCore& core_;
  RunNetwork network_;
  SyntheticNames names_;
  SocketChannel channel_;
  std::map<std::string, Pending, std::less<>> pending_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<DnsServer> dns_;
  std::unique_ptr<LocalPorts> local_;
  bool stopped_ = false;
};

}  // namespace px::proxy
