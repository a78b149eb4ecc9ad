// The one decision and the one upstream, whatever the intake.
//
// decide() takes the rule's decision (destination.hpp) and the broker's
// refusals before anything is looked up: a refused name never reaches a
// resolver, so it cannot leak through DNS. An allowed name is resolved on the
// server's helper threads; every answer is checked and the connect goes to
// exactly those addresses, in order, nothing resolved twice (no DNS
// rebinding between the check and the connect). Then hand_over() picks what
// carries the bytes.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <utility>

#include "proxy/connection.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

void Connection::decide() {
  const DestinationDecision d =
      decide_destination(server_.config, server_.ports_for(dest_.endpoint.host), dest_.endpoint);
  if (d.route != Route::refuse) return go_on(d.route);
  // Ask mode: held, not refused, until the user answers or the time is up.
  if (server_.config.ask_timeout.count() > 0 && askable(d.verdict.reason)) {
    state_ = State::asking;
    decision_.question = server_.ask(shared_from_this(), dest_.endpoint, d.verdict.reason);
    return;
  }
  refuse(d.verdict.status, d.verdict.reason, "denied", d.by_rule);
}

void Connection::answered(bool allow, std::string_view why, const std::string& outcome) {
  if (state_ != State::asking) return;
  decision_.answer = outcome;
  if (allow) return go_on(Route::resolve);  // only names are asked about, never this machine
  refuse(403, why, "denied", true);
}

void Connection::go_on(Route route) {
  // Local servers are this machine: what goes there is not looked at for
  // placeholders. A model server a credential is bound to gets the secret
  // through the broker (hand_over); any other gets the placeholder the run
  // holds, which is not the secret (refusing it would break a harness pointed
  // at a server of its own).
  to_this_machine_ = route == Route::loopback;
  if (!to_this_machine_ && refused_by_broker()) return;
  // Local servers: this machine's loopback; a literal names its own family,
  // localhost tries IPv4 first.
  if (route == Route::loopback) {
    if (dest_.endpoint.host == "127.0.0.1") return connect({asio::ip::address_v4::loopback()});
    if (dest_.endpoint.host == "[::1]") return connect({asio::ip::address_v6::loopback()});
    return connect({asio::ip::address_v4::loopback(), asio::ip::address_v6::loopback()});
  }
  resolve();
}

void Connection::resolve() {
  state_ = State::resolving;
  deadline_ = Clock::now() + server_.config.limits.connect_timeout;
  // A name looked up moments ago is not asked again (the answers are checked
  // again all the same): it saves two thread hops per connection.
  if (auto cached = server_.cached_addresses(dest_.endpoint.host)) return on_resolved(std::move(*cached));
  std::weak_ptr<Connection> weak = weak_from_this();
  ServerCore& server = server_;
  asio::post(server.resolver_pool, [weak, &server, host = dest_.endpoint.host] {
    auto result = server.resolver(host);
    if (result) server.cache_addresses(host, result.value());
    asio::post(server.io, [weak, result = std::move(result)]() mutable {
      if (auto self = weak.lock()) self->on_resolved(std::move(result));
    });
  });
}

void Connection::on_resolved(Result<std::vector<asio::ip::address>> addresses) {
  if (state_ != State::resolving) return;
  if (!addresses || addresses.value().empty()) return refuse(502, reason::resolve_failed, "failed");
  if (!server_.config.local_port_allowed(dest_.endpoint.port)) {
    // Refused if any answer is local (loopback, private, link-local such as a
    // cloud's metadata address), for every name: one that resolves to both a
    // public and a private address is a rebinding attempt, not a public server.
    for (const auto& a : addresses.value()) {
      const AddressClass c = classify(a);
      if (c != AddressClass::global) {
        return refuse(403, reason::local_address, "denied", true,
                      a.to_string() + " (" + std::string(to_string(c)) + ")");
      }
    }
  }
  connect(std::move(addresses).value());
}

void Connection::connect(std::vector<asio::ip::address> addresses) {
  state_ = State::connecting;
  deadline_ = Clock::now() + server_.config.limits.connect_timeout;
  // Exactly the addresses that were checked, in order: nothing is resolved again.
  candidates_ = std::move(addresses);
  next_candidate_ = 0;
  try_next_address();
}

void Connection::try_next_address() {
  if (next_candidate_ >= candidates_.size()) return refuse(502, reason::connect_failed, "failed");
  const tcp::endpoint ep(candidates_[next_candidate_++], dest_.endpoint.port);
  error_code ec;
  upstream_.close(ec);
  // Opened by hand for SOCK_CLOEXEC: Asio's own open() leaves the descriptor
  // inheritable, and the supervisor starts sealed children.
  const int fd = ::socket(ep.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return refuse(502, reason::connect_failed, "failed");
  upstream_.assign(ep.protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return refuse(502, reason::connect_failed, "failed");
  }
  upstream_.non_blocking(true, ec);  // Asio's own flag: the relay's reads and writes never block
  upstream_.set_option(tcp::no_delay(true), ec);
  // A connect to this machine is complete by the time connect() returns (the
  // handshake runs inside the call): one poll sees it, saving a trip through
  // the event loop; a remote one is waited for as usual.
  int rc;
  do rc = ::connect(fd, ep.data(), static_cast<socklen_t>(ep.size()));
  while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EINPROGRESS) return try_next_address();
  if (rc == 0) return on_connected(ep);
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, 0) == 1) return connect_finished(ep);
  await_connect(ep);
}

void Connection::await_connect(const tcp::endpoint& ep) {
  // A published port's socket comes here too, with no other address to try:
  // its failure is then the same connect-failed as the last address's.
  upstream_.async_wait(tcp::socket::wait_write, [self = shared_from_this(), ep](const error_code& wec) {
    if (self->state_ != State::connecting) return;
    if (wec) return self->try_next_address();
    self->connect_finished(ep);
  });
}

void Connection::connect_finished(const tcp::endpoint& ep) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(upstream_.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
    return try_next_address();
  on_connected(ep);
}

void Connection::on_connected(const tcp::endpoint& ep) {
  std::vector<asio::ip::address>().swap(candidates_);
  decision_.address = ep.address().to_string();
  decision_.verdict = "allowed";
  decision_.reason = reason::allowed;
  error_code ig;
  client_.set_option(tcp::no_delay(true), ig);
  hand_over();
}

void Connection::hand_over() {
  // A terminated host (the run's broker) is handed over here and only here,
  // after the decision and the connect to the checked address, exactly like
  // any other tunnel.
  Terminator* broker = server_.config.terminator.get();
  const Termination how = broker && dest_.broker_may_take
                              ? broker->termination(dest_.endpoint.host, dest_.endpoint.port)
                              : Termination::none;
  switch (dest_.named) {
    case Destination::Named::captured:
    case Destination::Named::published:
      // No request to answer: the tunnel starts at once, with what the intake read.
      decision_.status = 0;
      if (how != Termination::none) return terminate(std::exchange(dest_.first_bytes, std::string()));
      return start_relay();
    case Destination::Named::http_request:
      // A plain-HTTP request to a server on this machine the broker sits in
      // front of (a model server a credential is bound to): this request, as
      // the client sent it, and every later one on this connection go through
      // it. (Plain HTTP to a host whose TLS it terminates was refused in
      // decide(), unless that host is this machine.)
      if (how == Termination::plain) {
        decision_.status = 0;
        return terminate(std::exchange(dest_.first_bytes, std::string()));
      }
      return forward_request();
    case Destination::Named::connect:
      decision_.status = 200;
      outgoing_ = "HTTP/1.1 200 Connection Established\r\n\r\n";
      if (how != Termination::none)
        return send_outgoing(
            client_, [](Connection& c) { c.terminate(std::exchange(c.dest_.first_bytes, std::string())); });
      return send_outgoing(client_, [](Connection& c) {
        c.decision_.bytes_up += c.dest_.first_bytes.size();  // sent with the CONNECT, relayed now
        c.start_relay();
      });
  }
}

}  // namespace px::proxy
