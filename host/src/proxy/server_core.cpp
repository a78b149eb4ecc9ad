#include "proxy/server_core.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <future>

#include "common/logging.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

ServerCore::ServerCore(ProxyConfig cfg, Resolver res, DecisionLog decision_log)
    : config(std::move(cfg)), resolver(std::move(res)), log(std::move(decision_log)), scratch(64 * 1024) {
  const auto& l = config.limits;
  const auto shortest = std::min({l.header_timeout, l.connect_timeout, l.idle_timeout});
  sweep_interval_ = std::clamp(shortest / 4, std::chrono::milliseconds(20), std::chrono::milliseconds(500));
}

ServerCore::~ServerCore() {
  stop();
}

void ServerCore::start() {
  error_code ec;
  acceptor.non_blocking(true, ec);
  listens_v6_ = acceptor.local_endpoint(ec).protocol() == tcp::v6();
  accept();
  sweep();
  thread_ = std::thread([this] {
    // A handler that throws is a bug of ours; it must not take the run's
    // network down with it, so the loop logs and goes on.
    while (true) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("proxy: internal error in a connection handler: {}", e.what());
      }
    }
  });
}

void ServerCore::accept() {
  // accept4 by hand, not async_accept: Asio's accept leaves the new descriptor
  // inheritable, and the supervisor starts sealed children.
  acceptor.async_wait(tcp::acceptor::wait_read, [this](const error_code& ec) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {
      spdlog::warn("proxy: waiting for connections failed: {}", ec.message());
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](const error_code& e) {
        if (!e) accept();
      });
      return;
    }
    for (int i = 0; i < 64; ++i) {
      const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        // EMFILE and friends: wait instead of spinning on a full fd table.
        spdlog::warn("proxy: accepting a connection failed: {}", std::strerror(errno));
        accept_retry_.expires_after(std::chrono::milliseconds(100));
        accept_retry_.async_wait([this](const error_code& e) {
          if (!e) accept();
        });
        return;
      }
      tcp::socket socket(io);
      error_code aec;
      socket.assign(listens_v6_ ? tcp::v6() : tcp::v4(), fd, aec);
      if (aec) {
        ::close(fd);
        continue;
      }
      if (auto c = admit(std::move(socket), Connection::Kind::proxy)) c->start();
    }
    accept();
  });
}

std::shared_ptr<Connection> ServerCore::admit(tcp::socket socket, Connection::Kind kind,
                                              const HostPort& target) {
  if (connections_.size() >= config.limits.max_connections) {
    // Answered without reading: a flood costs one small write per socket.
    static const std::string busy =
        "HTTP/1.1 503 Service Unavailable\r\nx-proxy-error: too-many-connections\r\nContent-Length: 0\r\n"
        "Connection: close\r\n\r\n";
    error_code ig;
    socket.non_blocking(true, ig);
    if (kind == Connection::Kind::proxy) {
      socket.write_some(asio::buffer(busy), ig);
      socket.shutdown(tcp::socket::shutdown_both, ig);
    } else {
      socket.set_option(asio::socket_base::linger(true, 0), ig);  // no HTTP to speak: a reset
    }
    Decision d;
    d.method = kind == Connection::Kind::proxy ? "" : kind == Connection::Kind::captured ? "TCP" : "PUBLISH";
    d.host = target.host;
    d.port = target.port;
    d.verdict = "denied";
    d.reason = reason::too_many_connections;
    d.status = kind == Connection::Kind::proxy ? 503 : 0;
    log.write(d);
    note_refused(target.host, target.port, reason::too_many_connections);
    return nullptr;
  }
  auto c = std::make_shared<Connection>(*this, std::move(socket), kind);
  connections_.insert(c);
  return c;
}

Status ServerCore::serve_run_network(RunNetwork network) {
  Status result = ok();
  std::shared_future<void> ready;
  run_on_io([&] {
    if (run_network_) {
      result = Error::internal("the proxy serves a run's network already");
      return;
    }
    run_network_ = std::make_unique<RunNetworkService>(*this, std::move(network));
    result = run_network_->start();
    if (!result) {
      run_network_->stop();
      run_network_.reset();
      return;
    }
    ready = run_network_->ready();
  });
  // The seal's init answers these requests while it waits for the hand-off's
  // answer; bounded, so that a stuck init cannot hang the run's start.
  if (result && ready.valid()) ready.wait_for(std::chrono::seconds(2));
  return result;
}

void ServerCore::sweep() {
  sweep_timer_.expires_after(sweep_interval_);
  sweep_timer_.async_wait([this](const error_code& ec) {
    if (ec) return;
    const auto now = Clock::now();
    const std::vector<std::shared_ptr<Connection>> all(connections_.begin(), connections_.end());
    for (const auto& c : all) c->check_deadline(now);
    expire_questions(now);
    sweep();
  });
}

void ServerCore::close_all(std::string_view how) {
  // Terminated connections first: each ends through its connection, which
  // logs it with the broker's byte counts and leaves the set.
  if (config.terminator) config.terminator->abort_all(how);
  // Questions first: their connections are refused with the reason said, and
  // nothing stays asked of the user about a run that no longer waits.
  while (!questions_.empty()) {
    QuestionEnd end;
    end.outcome = how == "cut" ? "paused" : "stopped";
    close_question(questions_.begin()->first, false, how == "cut" ? reason::paused : reason::stopped,
                   std::move(end));
  }
  const std::vector<std::shared_ptr<Connection>> all(connections_.begin(), connections_.end());
  for (const auto& c : all) c->abort(how);
  connections_.clear();
}

void ServerCore::run_on_io(const std::function<void()>& fn) {
  if (!thread_.joinable() || std::this_thread::get_id() == thread_.get_id()) {
    fn();
    return;
  }
  std::promise<void> done;
  asio::post(io, [&] {
    fn();
    done.set_value();
  });
  done.get_future().wait();
}

void ServerCore::cut() {
  std::lock_guard lock(control_);
  paused = true;
  if (stopped_) return;
  run_on_io([this] { close_all("cut"); });
}

void ServerCore::restore() {
  std::lock_guard lock(control_);
  paused = false;
}

void ServerCore::stop() {
  std::lock_guard lock(control_);
  if (stopped_) return;
  stopped_ = true;
  run_on_io([this] {
    error_code ig;
    acceptor.close(ig);
    if (run_network_) run_network_->stop();
    sweep_timer_.cancel();
    accept_retry_.cancel();
  });
  // What had already happened when the run stopped is logged with its own
  // reason, not as "stopped": a refusal the client has already read (the
  // broker's TLS alert for a wrong server name, written at once) finishes in
  // a completion queued while its handler ran, which asio may place behind a
  // post from this thread. The first turn above has let the queue take it;
  // the connections still open are closed on the next turn, after it.
  run_on_io([this] { close_all("stopped"); });
  work_.reset();
  io.stop();
  if (thread_.joinable()) thread_.join();
  // A lookup still in getaddrinfo finishes first; its answer finds no
  // connection. Then the aborted handlers run here, releasing what they hold.
  resolver_pool.join();
  io.restart();
  io.poll();
}

void ServerCore::note_refused(const std::string& host, std::uint16_t port, std::string_view reason,
                              bool dns) {
  std::lock_guard lock(refused_mutex_);
  // A run that sends a new name each time cannot grow the supervisor: past
  // the cap, refusals count under their reason with no host.
  constexpr std::size_t kMaxDistinct = 256;
  auto key = std::make_tuple(host, port, std::string(reason), dns);
  if (refused_.size() >= kMaxDistinct && refused_.find(key) == refused_.end())
    key = {"", 0, std::string(reason), dns};
  ++refused_[key];
}

void ServerCore::note_challenged(const std::string& target) {
  std::lock_guard lock(refused_mutex_);
  constexpr std::size_t kMaxDistinct = 256;
  // Past the cap, a challenge counts as a refusal with no host (as note_refused's).
  if (challenged_.size() >= kMaxDistinct && challenged_.find(target) == challenged_.end()) {
    ++refused_[{"", 0, std::string(reason::auth_required), false}];
    return;
  }
  ++challenged_[target];
}

void ServerCore::note_authenticated(const std::string& target) {
  std::lock_guard lock(refused_mutex_);
  constexpr std::size_t kMaxDistinct = 256;
  if (challenged_.find(target) != challenged_.end() || authenticated_.size() < kMaxDistinct)
    authenticated_.insert(target);
}

std::vector<RefusedHost> ServerCore::refused_hosts() const {
  std::vector<RefusedHost> out;
  {
    std::lock_guard lock(refused_mutex_);
    for (const auto& [key, count] : refused_) {
      out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), count, std::get<3>(key)});
    }
    // A challenge that was answered is the protocol at work, not a refusal.
    for (const auto& [target, count] : challenged_)
      if (authenticated_.count(target) == 0)
        out.push_back({target, 0, std::string(reason::auth_required), count, false});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  return out;
}

namespace {
// Short: an answer is trusted no longer than a cautious DNS TTL, and what a
// name resolves to is checked again on every use.
constexpr auto kResolveCacheFor = std::chrono::seconds(5);
constexpr std::size_t kResolveCacheSize = 1024;
}  // namespace

std::optional<std::vector<asio::ip::address>> ServerCore::cached_addresses(const std::string& host) {
  std::lock_guard lock(cache_mutex_);
  const auto it = cache_.find(host);
  if (it == cache_.end()) return std::nullopt;
  if (Clock::now() >= it->second.first) {
    cache_.erase(it);
    return std::nullopt;
  }
  return it->second.second;
}

void ServerCore::cache_addresses(const std::string& host, const std::vector<asio::ip::address>& addresses) {
  std::lock_guard lock(cache_mutex_);
  if (cache_.size() >= kResolveCacheSize) cache_.clear();
  cache_[host] = {Clock::now() + kResolveCacheFor, addresses};
}

std::chrono::milliseconds ServerCore::auth_failure_delay() {
  auth_failures_ = std::min(auth_failures_ + 1, 20u);
  return std::chrono::milliseconds(100) * auth_failures_;
}

}  // namespace px::proxy
