#include "proxy/run_network.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.hpp"
#include "proxy/destination.hpp"
#include "proxy/dns_server.hpp"
#include "proxy/local_ports.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

RunNetworkService::RunNetworkService(ServerCore& core, RunNetwork network)
    : core_(core),
      network_(std::move(network)),
      names_(network_.ranges, core.config.limits.max_names),
      channel_(core.io, std::move(network_.socket_channel)) {}

RunNetworkService::~RunNetworkService() {
  stop();
}

Status RunNetworkService::start() {
  dns_ = std::make_unique<DnsServer>(core_, *this);
  for (auto& fd : network_.dns_udp) PX_TRY(dns_->add_udp(std::move(fd)));
  for (auto& fd : network_.dns_tcp) PX_TRY(dns_->add_tcp(std::move(fd)));
  local_ = std::make_unique<LocalPorts>(core_, *this, network_.mirror_host_ports, network_.published);
  return local_->start();
}

std::shared_future<void> RunNetworkService::ready() const {
  return local_->first_scan();
}

void RunNetworkService::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (dns_) dns_->stop();
  if (local_) local_->stop();
  error_code ig;
  for (auto& l : listeners_) l->acceptor->close(ig);
  channel_.close();
  // Waiters still pending learn that no name will come.
  auto pending = std::move(pending_);
  pending_.clear();
  for (auto& [name, p] : pending)
    for (auto& w : p.waiters) w(nullptr, reason::stopped);
}

void RunNetworkService::ensure_name(const std::string& name, NameReady done) {
  if (stopped_) return done(nullptr, reason::stopped);
  if (const auto it = pending_.find(name); it != pending_.end()) {
    if (it->second.state == Pending::State::ready) return done(names_.find(name), reason::allowed);
    it->second.waiters.push_back(std::move(done));
    return;
  }
  const SyntheticNames::Entry* entry = names_.allocate(name);
  if (!entry) return done(nullptr, reason::too_many_names);
  // Every port the rule allows for this name, on both addresses: a program
  // may try any of them. Other ports are refused by the kernel (RST).
  std::vector<netns::Endpoint> endpoints;
  for (std::uint16_t port : core_.capture_ports_for(name)) {
    endpoints.push_back({entry->v4.to_string(), port});
    if (entry->v6) endpoints.push_back({entry->v6->to_string(), port});
  }
  if (endpoints.size() > netns::kMaxEndpoints) {
    spdlog::warn("proxy: {} is allowed on more ports than one request holds; capturing the first {}", name,
                 netns::kMaxEndpoints);
    endpoints.resize(netns::kMaxEndpoints);
  }
  Pending& p = pending_[name];
  p.waiters.push_back(std::move(done));
  channel_.listen(std::move(endpoints),
                  [this, name](Result<std::vector<UniqueFd>> made) { names_made(name, std::move(made)); });
}

void RunNetworkService::names_made(const std::string& name, Result<std::vector<UniqueFd>> made) {
  const auto it = pending_.find(name);
  if (it == pending_.end()) return;  // stopped meanwhile (the descriptors close here)
  std::vector<NameReady> waiters = std::move(it->second.waiters);
  it->second.waiters.clear();
  if (!made) {
    // Asked again later, it is tried again (a run's own server may have held the port).
    spdlog::warn("proxy: no listener for {} inside the run: {}", name, made.error().message);
    pending_.erase(it);
    for (auto& w : waiters) w(nullptr, reason::capture_failed);
    return;
  }
  for (auto& fd : made.value()) {
    adopt_listener(std::move(fd), [this](const tcp::endpoint& local) {
      const SyntheticNames::Entry* e = names_.by_address(local.address());
      return e ? HostPort{e->name, local.port()} : HostPort{};
    });
  }
  it->second.state = Pending::State::ready;
  const SyntheticNames::Entry* entry = names_.find(name);
  for (auto& w : waiters) w(entry, reason::allowed);
}

tcp::acceptor* RunNetworkService::adopt_listener(UniqueFd fd, TargetOf target) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return nullptr;
  auto l = std::make_unique<Listener>();
  l->acceptor = std::make_unique<tcp::acceptor>(core_.io);
  l->target = std::move(target);
  error_code ec;
  l->acceptor->assign(ss.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd.get(), ec);
  if (ec) return nullptr;
  l->local = l->acceptor->local_endpoint(ec);
  if (ec) return nullptr;
  fd.release();
  l->acceptor->non_blocking(true, ec);
  listeners_.push_back(std::move(l));
  accept(*listeners_.back());
  return listeners_.back()->acceptor.get();
}

void RunNetworkService::close_listener(tcp::acceptor* acceptor) {
  for (auto it = listeners_.begin(); it != listeners_.end(); ++it) {
    if ((*it)->acceptor.get() != acceptor) continue;
    error_code ig;
    (*it)->acceptor->close(ig);
    // Destroyed once its aborted wait has run (it holds a reference to it).
    asio::post(core_.io, [owned = std::shared_ptr<Listener>(std::move(*it))] {});
    listeners_.erase(it);
    return;
  }
}

void RunNetworkService::accept(Listener& listener) {
  listener.acceptor->async_wait(tcp::acceptor::wait_read, [this, &listener](const error_code& ec) {
    if (ec || stopped_ || !listener.acceptor->is_open()) return;
    for (int i = 0; i < 64; ++i) {
      const int fd =
          ::accept4(listener.acceptor->native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        break;  // EAGAIN, or a full fd table: the next readiness retries
      }
      tcp::socket socket(core_.io);
      error_code aec;
      socket.assign(listener.local.protocol(), fd, aec);
      if (aec) {
        ::close(fd);
        continue;
      }
      const tcp::endpoint local =
          listener.local.address().is_unspecified() ? socket.local_endpoint(aec) : listener.local;
      HostPort target = aec ? HostPort{} : listener.target(local);
      // An empty host (no name of this run's behind the address: listeners
      // exist only for names, so this is a bug) is refused by start_captured.
      if (target.host.empty()) target.port = local.port();
      auto c = core_.admit(std::move(socket), Connection::Kind::captured, target);
      if (!c) continue;
      c->start_captured(std::move(target));
    }
    accept(listener);
  });
}

}  // namespace px::proxy
