#include "proxy/local_ports.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "common/logging.hpp"
#include "common/socket_request.hpp"
#include "proxy/run_network.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kScanInterval = std::chrono::seconds(1);

std::string read_proc(const char* path) {
  // Read whole with one descriptor: /proc files are generated per read.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[16384];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace

std::set<std::uint16_t> listening_loopback_ports(std::string_view text, bool v6) {
  // "  0: 0100007F:1F90 00000000:0000 0A ...": the address as the kernel's
  // 32-bit words in host order, the port big-endian hex, state 0A = LISTEN.
  static const std::set<std::string_view> v4_ok{"0100007F", "00000000"};
  static const std::set<std::string_view> v6_ok{"00000000000000000000000001000000",
                                                "00000000000000000000000000000000",
                                                "0000000000000000FFFF00000100007F"};
  std::set<std::uint16_t> out;
  std::size_t pos = text.find('\n');  // the header line
  while (pos != std::string_view::npos && pos + 1 < text.size()) {
    const std::size_t end = text.find('\n', pos + 1);
    const std::string_view line = text.substr(pos + 1, end == std::string_view::npos ? end : end - pos - 1);
    pos = end;
    std::istringstream in{std::string(line)};
    std::string slot, local, remote, state;
    if (!(in >> slot >> local >> remote >> state) || state != "0A") continue;
    const std::size_t colon = local.find(':');
    if (colon == std::string::npos) continue;
    const std::string_view address = std::string_view(local).substr(0, colon);
    if (!(v6 ? v6_ok.count(address) : v4_ok.count(address))) continue;
    unsigned port = 0;
    try {
      port = static_cast<unsigned>(std::stoul(local.substr(colon + 1), nullptr, 16));
    } catch (...) {
      continue;
    }
    if (port > 0 && port <= 65535) out.insert(static_cast<std::uint16_t>(port));
  }
  return out;
}

LocalPorts::LocalPorts(ServerCore& core, RunNetworkService& network, bool mirror,
                       std::vector<RunNetwork::Published> published)
    : core_(core), network_(network), mirror_(mirror), published_(std::move(published)), timer_(core.io) {}

LocalPorts::~LocalPorts() {
  stop();
}

Status LocalPorts::start() {
  for (const auto& p : published_) {
    // On this machine's loopback only: publishing is for the user, not the network.
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
      return Error::io("make a socket to publish the run's port " + std::to_string(p.inside), errno);
    auto acceptor = std::make_unique<tcp::acceptor>(core_.io);
    error_code ec;
    acceptor->assign(tcp::v4(), fd, ec);
    if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor->bind(tcp::endpoint(asio::ip::address_v4::loopback(), p.host), ec);
    if (!ec) acceptor->listen(netns::kListenBacklog, ec);
    if (ec)
      return Error::invalid("--publish " + std::to_string(p.inside) + ":" + std::to_string(p.host) +
                            ": cannot listen on 127.0.0.1:" + std::to_string(p.host) + " (" + ec.message() +
                            "); choose another host port, e.g. --publish " + std::to_string(p.inside) + ":0");
    acceptor->non_blocking(true, ec);
    host_listeners_.push_back(std::move(acceptor));
    accept_published(*host_listeners_.back(), p.inside);
  }
  if (mirror_) {
    first_scan_pending_ = 1;  // held until scan() has sent its requests
    scan();
    first_scan_answered();
  } else {
    first_scan_.set_value();
  }
  return ok();
}

void LocalPorts::first_scan_answered() {
  if (first_scan_pending_ <= 0) return;
  if (--first_scan_pending_ == 0) {
    first_scan_pending_ = -1;
    first_scan_.set_value();
  }
}

void LocalPorts::stop() {
  *alive_ = false;
  error_code ig;
  timer_.cancel();
  for (auto& l : host_listeners_) l->close(ig);
}

void LocalPorts::schedule() {
  timer_.expires_after(kScanInterval);
  timer_.async_wait([this, alive = alive_](const error_code& ec) {
    if (!ec && *alive) scan();
  });
}

void LocalPorts::scan() {
  std::set<std::uint16_t> host = listening_loopback_ports(read_proc("/proc/self/net/tcp"), false);
  for (auto p : listening_loopback_ports(read_proc("/proc/self/net/tcp6"), true)) host.insert(p);
  // Only the ports Local servers names (every port when it names none).
  for (auto it = host.begin(); it != host.end();)
    it = core_.config.local_port_allowed(*it) ? std::next(it) : host.erase(it);
  // Our own published listeners are on the host's loopback too: never mirrored
  // back into the run (a loop).
  for (const auto& l : host_listeners_) {
    error_code ec;
    const auto ep = l->local_endpoint(ec);
    if (!ec) host.erase(ep.port());
  }
  for (auto it = mirrored_.begin(); it != mirrored_.end();) {
    if (host.count(it->first)) {
      ++it;
      continue;
    }
    for (auto* a : it->second) network_.close_listener(a);
    it = mirrored_.erase(it);
  }
  for (auto it = refused_.begin(); it != refused_.end();)
    it = host.count(*it) ? std::next(it) : refused_.erase(it);
  for (std::uint16_t port : host) {
    if (mirrored_.count(port) || refused_.count(port)) continue;
    mirrored_[port];  // being made
    std::vector<netns::Endpoint> where{{"127.0.0.1", port}};
    if (network_.has_ipv6()) where.push_back({"::1", port});
    for (const auto& e : where) {
      if (first_scan_pending_ >= 0) ++first_scan_pending_;
      network_.channel().listen({e}, [this, port, alive = alive_](Result<std::vector<UniqueFd>> made) {
        if (!*alive) return;
        first_scan_answered();
        const auto it = mirrored_.find(port);
        if (!made) {
          // The run listens there itself (its own server wins), or the port went away.
          refused_.insert(port);
          return;
        }
        if (it == mirrored_.end()) return;  // closed on the host meanwhile
        auto* a = network_.adopt_listener(std::move(made.value().front()), [](const tcp::endpoint& local) {
          return HostPort{"localhost", local.port()};
        });
        if (a) it->second.push_back(a);
      });
    }
  }
  schedule();
}

void LocalPorts::accept_published(tcp::acceptor& acceptor, std::uint16_t inside) {
  acceptor.async_wait(
      tcp::acceptor::wait_read, [this, &acceptor, inside, alive = alive_](const error_code& ec) {
        if (ec || !*alive) return;
        for (int i = 0; i < 16; ++i) {
          const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
          if (fd < 0) break;
          tcp::socket socket(core_.io);
          error_code aec;
          socket.assign(tcp::v4(), fd, aec);
          if (aec) {
            ::close(fd);
            continue;
          }
          auto c = core_.admit(std::move(socket), Connection::Kind::published, HostPort{"localhost", inside});
          if (!c) continue;
          network_.channel().connect({"127.0.0.1", inside}, [c, inside](Result<std::vector<UniqueFd>> made) {
            c->start_published(inside, made ? std::move(made.value().front()) : UniqueFd());
          });
        }
        accept_published(acceptor, inside);
      });
}

}  // namespace px::proxy
