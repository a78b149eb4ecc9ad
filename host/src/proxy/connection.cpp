#include "proxy/connection.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#include "proxy/destination.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/http_status.hpp"
#include "proxy/reasons.hpp"
#include "proxy/run_network.hpp"
#include "proxy/server_core.hpp"
#include "proxy/tls_sni.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// What the log and the refusal list keep of a request target: its authority
// (host[:port]), never a path or a query. Origin-form targets have none.
std::string authority_of(std::string_view target) {
  const auto scheme = target.find("://");
  if (scheme != std::string_view::npos)
    target.remove_prefix(scheme + 3);
  else if (!target.empty() && target.front() == '/')
    return {};
  target = target.substr(0, target.find_first_of("/?#\\"));
  return std::string(target.substr(0, 255));
}

constexpr std::size_t kHeadReadChunk = 4096;
constexpr auto kLinger = std::chrono::seconds(2);
constexpr int kReadsPerTurn = 16;  // then yield, so one busy tunnel cannot starve the others
// Bytes a tunnel's pipe may hold: larger means fewer system calls. The kernel
// caps it (fs.pipe-max-size, and a per-user budget); the default is kept then.
constexpr int kPipeBytes = 1 << 20;
// A ClientHello larger than this is not what any TLS client sends.
constexpr std::size_t kMaxHelloBytes = 32 * 1024;

// The body names what was refused and why; it echoes a host only once that
// host passed the name check, so no client bytes are reflected.
std::string explain(std::string_view reason, const std::string& host) {
  const std::string what = host.empty() ? std::string("this request") : host;
  if (reason == reason::not_allowed) {
    return "parallex proxy: " + what +
           " is outside this run's network rule. Add it to the run's allowed hosts to let it through.\n";
  }
  if (reason == reason::auth_required || reason == reason::auth_failed) {
    return "parallex proxy: this proxy needs the run's password (Proxy-Authorization: Basic).\n";
  }
  if (reason == reason::local_servers_off || reason == reason::local_address) {
    return "parallex proxy: " + what +
           " is on this machine or a private network; turn Local servers on to reach it.\n";
  }
  if (reason == reason::paused) return "parallex proxy: the network of this run is paused.\n";
  if (reason == reason::credential_exfiltration) {
    return "parallex proxy: this request carries a brokered credential that may not go to " + what +
           "; it was refused and is reported at the end of the run.\n";
  }
  if (reason == reason::plain_http_to_terminated) {
    return "parallex proxy: " + what +
           " has brokered credentials or request rules, which apply over HTTPS only; use https://.\n";
  }
  return "parallex proxy refused " + what + ": " + std::string(reason) + ".\n";
}

std::string response(int status, std::string_view reason, const std::string& host) {
  const std::string body = explain(reason, host);
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_text(status)) + "\r\n";
  if (status == 407) r += "Proxy-Authenticate: Basic realm=\"parallex\"\r\n";
  r += "x-proxy-error: " + std::string(reason) + "\r\n";
  r += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
       "\r\nConnection: close\r\n\r\n" + body;
  return r;
}

}  // namespace

Connection::Connection(ServerCore& server, tcp::socket client, Kind kind)
    : server_(server), kind_(kind), client_(std::move(client)), upstream_(server.io) {
  started_ = Clock::now();
  up_.from = &client_;
  up_.to = &upstream_;
  up_.counter = &decision_.bytes_up;
  down_.from = &upstream_;
  down_.to = &client_;
  down_.counter = &decision_.bytes_down;
}

void Connection::start() {
  error_code ec;
  client_.non_blocking(true, ec);
  if (ec) return close("error");
  // A client sends its request with (or just after) the handshake's last
  // packet: it is usually here already, so it is read before waiting for it.
  on_head_readable({});
}

void Connection::wait_head() {
  client_.async_wait(tcp::socket::wait_read,
                     [self = shared_from_this()](const error_code& ec) { self->on_head_readable(ec); });
}

void Connection::on_head_readable(const error_code& ec) {
  if (state_ != State::head) return;
  if (ec) return close("error");
  auto& buf = server_.scratch;
  error_code rec;
  const std::size_t n = client_.read_some(asio::buffer(buf.data(), kHeadReadChunk), rec);
  if (rec == asio::error::would_block || rec == asio::error::try_again) return wait_head();
  if (rec) {
    return close("eof");  // gone before a whole head arrived: nothing to decide
  }
  head_.append(buf.data(), n);
  const ParseResult r = parse_request_head(head_, server_.config.limits.head, request_);
  if (r.state == ParseState::need_more) return wait_head();
  if (r.state == ParseState::bad) {
    // Keep something recognizable for the log (escaped there), never the head.
    // Unreadable: no host can be told, and the line itself (it may hold a
    // path or a secret) is never logged. The reason says what was wrong.
    decision_.host.clear();
    return refuse(r.status, r.reason);
  }
  decide();
}

void Connection::decide() {
  decision_.method = request_.method;
  decision_.host = authority_of(request_.target);
  if (server_.paused) return refuse(403, reason::paused, "paused");
  switch (check_proxy_auth(request_, server_.config.password)) {
    case AuthResult::missing:
      return refuse(407, reason::auth_required);
    case AuthResult::wrong: {
      // Guessing is slowed down: each wrong password in a row waits longer.
      state_ = State::auth_wait;
      delay_ = std::make_unique<asio::steady_timer>(server_.io, server_.auth_failure_delay());
      delay_->async_wait([self = shared_from_this()](const error_code& ec) {
        if (ec || self->state_ != State::auth_wait) return;
        self->refuse(407, reason::auth_failed);
      });
      return;
    }
    case AuthResult::ok:
      server_.auth_succeeded();
      server_.note_authenticated(decision_.host);
      break;
  }
  decide_after_auth();
}

void Connection::decide_after_auth() {
  const Verdict v = interpret(request_, target_);
  if (!target_.endpoint.host.empty()) {
    decision_.host = target_.endpoint.host;
    decision_.port = target_.endpoint.port;
  }
  // 127.0.0.1 and [::1] are read whole but refused as IP literals unless
  // Local servers is on: then they are this machine, like localhost.
  const bool loopback_literal = v.reason == reason::ip_literal && is_loopback_name(target_.endpoint.host);
  if (!v.ok() && !(loopback_literal && server_.config.local_port_allowed(target_.endpoint.port)))
    return refuse(v.status, v.reason);
  decide_target();
}

void Connection::decide_target() {
  const DestinationDecision d = decide_destination(server_.config, target_.endpoint);
  if (d.route == Route::refuse) return refuse(d.verdict.status, d.verdict.reason, "denied", d.by_rule);
  // Local servers are this machine: what goes there is not looked at for
  // placeholders. A model server a credential is bound to gets the secret
  // through the broker (on_connected); any other gets the placeholder the run
  // holds, which is not the secret (refusing it would break a harness pointed
  // at a server of its own).
  to_this_machine_ = d.route == Route::loopback;
  if (!to_this_machine_ && refused_by_broker()) return;
  // Local servers: this machine's loopback; a literal names its own family,
  // localhost tries IPv4 first.
  if (d.route == Route::loopback) {
    if (target_.endpoint.host == "127.0.0.1") return connect({asio::ip::address_v4::loopback()});
    if (target_.endpoint.host == "[::1]") return connect({asio::ip::address_v6::loopback()});
    return connect({asio::ip::address_v4::loopback(), asio::ip::address_v6::loopback()});
  }
  resolve();
}

bool Connection::refused_by_broker() {
  Terminator* broker = server_.config.terminator.get();
  if (broker == nullptr) return false;
  const std::string& host = target_.endpoint.host;
  // What leaves the run before any relay: the name (looked up, sent as the
  // server name), a plain-HTTP head whole, a captured connection's first bytes.
  const std::string destination = host + ":" + std::to_string(target_.endpoint.port);
  bool found = broker->outbound_credential(host, destination, "destination name").has_value();
  if (!found && kind_ == Kind::proxy && !target_.is_connect)
    found = broker
                ->outbound_credential(host, std::string_view(head_).substr(0, request_.head_size),
                                      "plain-HTTP request head")
                .has_value();
  if (!found && kind_ == Kind::captured && !hello_.empty())
    found = broker->outbound_credential(host, hello_, "first bytes of a captured connection").has_value();
  if (found) {
    refuse(403, reason::credential_exfiltration, "denied", true);
    return true;
  }
  const bool plain_http = (kind_ == Kind::proxy && !target_.is_connect) || decision_.inspected == "http-host";
  if (plain_http && broker->termination(host, target_.endpoint.port) == Termination::tls) {
    refuse(403, reason::plain_http_to_terminated, "denied", true);
    return true;
  }
  return false;
}

void Connection::terminate(std::string early) {
  state_ = State::terminated;
  decision_.inspected = "terminated";
  hello_ = std::string();
  outgoing_ = std::string();
  server_.config.terminator->relay(
      std::move(client_), std::move(early), std::move(upstream_), target_.endpoint.host,
      target_.endpoint.port, [self = shared_from_this()](const RelayEnd& end) { self->on_terminated(end); });
}

void Connection::on_terminated(const RelayEnd& end) {
  if (state_ == State::closed) return;
  // The plaintext the run and the server exchanged; a connection the broker
  // refused before its first request keeps the broker's reason.
  decision_.bytes_up = end.bytes_up;
  decision_.bytes_down = end.bytes_down;
  if (end.reason != reason::allowed) {
    decision_.verdict = end.reason.starts_with("upstream-") ? "failed" : "denied";
    decision_.reason = end.reason;
  }
  close(end.closed);
}

bool Connection::body_carries_credential(std::string_view raw, const std::vector<std::string_view>& payload) {
  if (body_check_ && !raw.empty() && body_check_->feed(raw)) return true;
  if (payload_check_)
    for (const auto piece : payload)
      if (payload_check_->feed(piece)) return true;
  return false;
}

void Connection::refuse_body() {
  error_code ig;
  upstream_.close(ig);
  if (decision_.bytes_down == 0 && response_head_.empty() && !response_head_done_)
    return refuse(403, reason::credential_exfiltration, "denied", true);
  // The answer has begun: the client cannot be told any more, only cut off.
  decision_.verdict = "denied";
  decision_.reason = reason::credential_exfiltration;
  server_.note_refused(decision_.host, decision_.port, reason::credential_exfiltration);
  close("error");
}

void Connection::start_captured(HostPort target) {
  decision_.method = "TCP";
  decision_.host = target.host;
  decision_.port = target.port;
  target_.endpoint = std::move(target);
  target_.is_connect = true;  // a tunnel: bytes relayed as they are
  error_code ec;
  client_.non_blocking(true, ec);
  if (ec) return close("error");
  if (target_.endpoint.host.empty()) return reset(reason::unknown_synthetic_address, "denied", false);
  if (server_.paused) return reset(reason::paused, "paused", false);
  // HTTP and TLS speak first: on their ports the first bytes are checked
  // before anything is resolved or connected, so nothing reaches an upstream
  // for a connection that is neither or names another host.
  if (target_.endpoint.host != "localhost" && (target_.endpoint.port == 80 || target_.endpoint.port == 443)) {
    state_ = State::sniffing;
    return sniff();
  }
  decide_target();
}

void Connection::sniff() {
  client_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
    if (self->state_ != State::sniffing) return;
    if (ec) return self->close("error");
    char buf[4096];
    error_code rec;
    const std::size_t n = self->client_.read_some(asio::buffer(buf, sizeof buf), rec);
    if (rec == asio::error::would_block || rec == asio::error::try_again) return self->sniff();
    if (rec) {
      // Gone before saying anything: nothing was asked, nothing is logged.
      self->decision_.verdict = {};
      return self->close("eof");
    }
    self->decision_.bytes_up += n;
    self->hello_.append(buf, n);
    self->decide_sniffed();
  });
}

void Connection::decide_sniffed() {
  using Status = ClientHelloSni::Status;
  const auto hello = read_client_hello_sni(hello_);
  switch (hello.status) {
    case Status::need_more:
      if (hello_.size() >= kMaxHelloBytes) return reset(reason::tls_hello_unreadable, "denied", false);
      return sniff();
    case Status::malformed:
      return reset(reason::tls_hello_unreadable, "denied", false);
    case Status::found:
      if (!sni_matches(hello.host, target_.endpoint.host)) return reset(reason::sni_mismatch, "denied", true);
      [[fallthrough]];
    case Status::no_sni:
      decision_.inspected = "tls-sni";
      break;
    case Status::not_tls: {
      // Plain HTTP: a whole request head whose Host names the captured host.
      Request request;
      const ParseResult parsed = parse_request_head(hello_, server_.config.limits.head, request);
      if (parsed.state == ParseState::need_more) return sniff();
      if (parsed.state == ParseState::bad) return reset(reason::unexpected_protocol, "denied", false);
      const Header* host = request.find("host");
      HostPort named;
      if (request.count("host") != 1 ||
          !parse_authority(host->value, false, target_.endpoint.port, named).ok() ||
          named.host != target_.endpoint.host)
        return reset(reason::host_mismatch, "denied", true);
      decision_.inspected = "http-host";
      break;
    }
  }
  hello_checked_ = true;
  decide_target();
}

void Connection::start_published(std::uint16_t inside_port, UniqueFd inside) {
  decision_.method = "PUBLISH";
  decision_.host = "localhost";
  decision_.port = inside_port;
  target_.endpoint = {"localhost", inside_port};
  target_.is_connect = true;
  hello_checked_ = true;  // inbound, from this machine: nothing to check
  error_code ec;
  client_.non_blocking(true, ec);
  if (!ec) upstream_.assign(tcp::v4(), inside.get(), ec);
  if (ec) return reset(reason::connect_failed, "failed", false);
  inside.release();
  state_ = State::connecting;
  deadline_ = Clock::now() + server_.config.limits.connect_timeout;
  upstream_.async_wait(
      tcp::socket::wait_write, [self = shared_from_this(), inside_port](const error_code& wec) {
        if (self->state_ != State::connecting) return;
        int err = 0;
        socklen_t len = sizeof err;
        if (wec || ::getsockopt(self->upstream_.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
            err != 0)
          return self->reset(reason::connect_failed, "failed", false);
        self->on_connected(tcp::endpoint(asio::ip::address_v4::loopback(), inside_port));
      });
}

void Connection::resolve() {
  state_ = State::resolving;
  deadline_ = Clock::now() + server_.config.limits.connect_timeout;
  // A name looked up moments ago is not asked again (the answers are checked
  // again all the same): it saves two thread hops per connection.
  if (auto cached = server_.cached_addresses(target_.endpoint.host)) return on_resolved(std::move(*cached));
  std::weak_ptr<Connection> weak = weak_from_this();
  ServerCore& server = server_;
  asio::post(server.resolver_pool, [weak, &server, host = target_.endpoint.host] {
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
  if (!server_.config.local_port_allowed(target_.endpoint.port)) {
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
  const tcp::endpoint ep(candidates_[next_candidate_++], target_.endpoint.port);
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
  if (kind_ == Kind::published) {
    upstream_.non_blocking(true, ig);
    upstream_.set_option(tcp::no_delay(true), ig);
  }
  client_.set_option(tcp::no_delay(true), ig);

  // A terminated host (the run's broker): CONNECT tunnels and captured
  // connections go to the broker, here and only here, after the decision and
  // the connect to the checked address, exactly like any other tunnel.
  Terminator* broker = server_.config.terminator.get();
  const Termination how = broker && kind_ != Kind::published
                              ? broker->termination(target_.endpoint.host, target_.endpoint.port)
                              : Termination::none;
  const bool terminated = target_.is_connect && how != Termination::none;
  if (kind_ != Kind::proxy) {
    // No request to answer: the tunnel starts at once, with what sniff() held.
    decision_.status = 0;
    if (terminated) return terminate(std::move(hello_));
    return start_relay();
  }
  // A plain-HTTP request to a server on this machine the broker sits in
  // front of (a model server a credential is bound to): this request, as the
  // client sent it, and every later one on this connection go through it.
  if (!target_.is_connect && how == Termination::plain) {
    decision_.status = 0;
    return terminate(std::exchange(head_, std::string()));
  }
  std::string leftover = head_.substr(request_.head_size);
  head_ = std::string();
  if (target_.is_connect) {
    decision_.status = 200;
    outgoing_ = "HTTP/1.1 200 Connection Established\r\n\r\n";
    early_ = std::move(leftover);  // bytes the client sent with its CONNECT
    if (terminated)
      return send_outgoing(client_,
                           [](Connection& c) { c.terminate(std::exchange(c.early_, std::string())); });
    return send_outgoing(client_, [](Connection& c) {
      c.decision_.bytes_up += c.early_.size();
      c.outgoing_ = std::exchange(c.early_, std::string());
      c.start_relay();
    });
  }
  // Plain HTTP: one request, its body framed exactly, nothing after it.
  outgoing_ = upstream_head(request_, target_);
  std::string_view body = leftover;
  std::vector<std::string_view> payload;  // a chunked body's data, without its framing
  switch (target_.body) {
    case Target::Body::none:
      up_.done = true;
      body = {};
      break;
    case Target::Body::length:
      up_.limited = true;
      body = body.substr(
          0, static_cast<std::size_t>(std::min<std::uint64_t>(body.size(), target_.content_length)));
      up_.remaining = target_.content_length - body.size();
      up_.done = up_.remaining == 0;
      break;
    case Target::Body::chunked: {
      up_.chunked = std::make_unique<ChunkedTracker>();
      if (broker && !to_this_machine_) payload_check_ = broker->body_check(target_.endpoint.host);
      const auto step = up_.chunked->feed(body, payload_check_ ? &payload : nullptr);
      if (step.error) return close("error");
      body = body.substr(0, step.consumed);
      up_.done = step.done;
      break;
    }
  }
  if (broker && !to_this_machine_) body_check_ = broker->body_check(target_.endpoint.host);
  if (body_carries_credential(body, payload)) return refuse_body();
  decision_.bytes_up += body.size();
  outgoing_.append(body);
  request_ = {};
  start_relay();
}

void Connection::start_relay() {
  state_ = State::relaying;
  last_activity_ = Clock::now();
  request_ = {};
  if (target_.is_connect) {
    arm(down_);
    if (hello_checked_) return release_hello([](Connection& c) { c.arm(c.up_); });
    hello_pending_ = true;
    hello_ += outgoing_;  // bytes the client sent with its CONNECT
    outgoing_ = std::string();
    // A captured client spoke when it connected (it never waits for a 200):
    // its first bytes are usually here already.
    if (hello_.empty() && kind_ == Kind::captured) return read_hello();
    return decide_hello();
  }
  send_outgoing(upstream_, [](Connection& c) {
    if (!c.up_.done) c.arm(c.up_);
    c.arm(c.down_);
  });
}

void Connection::send_outgoing(tcp::socket& to, void (*then)(Connection&)) {
  // Written at once: a small answer or a first message nearly always fits
  // the socket's buffer. Only the rest, if any, waits for the receiver.
  std::size_t sent = 0;
  while (sent < outgoing_.size()) {
    const ssize_t n =
        ::send(to.native_handle(), outgoing_.data() + sent, outgoing_.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return close("error");
    sent += static_cast<std::size_t>(n);
  }
  if (sent == outgoing_.size()) {
    outgoing_ = std::string();
    return then(*this);
  }
  outgoing_.erase(0, sent);
  const State waiting = state_;
  asio::async_write(to, asio::buffer(outgoing_),
                    [self = shared_from_this(), then, waiting](const error_code& e, std::size_t) {
                      if (self->state_ != waiting) return;
                      if (e) return self->close("error");
                      self->outgoing_ = std::string();
                      then(*self);
                    });
}

void Connection::read_hello() {
  char buf[4096];
  error_code rec;
  const std::size_t n = client_.read_some(asio::buffer(buf, sizeof buf), rec);
  if (rec == asio::error::would_block || rec == asio::error::try_again) return arm(up_);
  if (rec == asio::error::eof) {
    // The client gave up before a whole ClientHello: pass on what it sent, then its end.
    hello_pending_ = false;
    decision_.inspected = "none";
    return release_hello([](Connection& c) { c.on_source_eof(c.up_); });
  }
  if (rec) return close("error");
  last_activity_ = Clock::now();
  *up_.counter += n;
  hello_.append(buf, n);
  decide_hello();
}

void Connection::decide_hello() {
  using Status = ClientHelloSni::Status;
  const auto hello = read_client_hello_sni(hello_);
  if (hello.status == Status::need_more) {
    if (hello_.size() >= kMaxHelloBytes) return refuse_tunnel(reason::tls_hello_unreadable);
    return arm(up_);
  }
  if (hello.status == Status::malformed) return refuse_tunnel(reason::tls_hello_unreadable);
  if (hello.status == Status::found && !sni_matches(hello.host, target_.endpoint.host))
    return refuse_tunnel(reason::sni_mismatch);
  // Not TLS (relayed as raw TCP: SSH, databases, a server that speaks
  // first), no server name, or the CONNECT host itself: the tunnel is open.
  decision_.inspected = hello.status == Status::not_tls ? "none" : "tls-sni";
  hello_pending_ = false;
  release_hello([](Connection& c) { c.arm(c.up_); });
}

void Connection::release_hello(void (*then)(Connection&)) {
  if (hello_.empty()) return then(*this);
  outgoing_ = std::move(hello_);
  hello_ = std::string();
  send_outgoing(upstream_, then);
}

void Connection::refuse_tunnel(std::string_view why) {
  if (kind_ != Kind::proxy) return reset(why, "denied", why == reason::sni_mismatch);
  decision_.verdict = "denied";
  decision_.reason = why;
  server_.note_refused(decision_.host, decision_.port, why);
  close(why);
}

void Connection::arm(Direction& d) {
  d.from->async_wait(tcp::socket::wait_read,
                     [self = shared_from_this(), &d](const error_code& ec) { self->on_readable(d, ec); });
}

void Connection::on_readable(Direction& d, const error_code& ec) {
  if (state_ != State::relaying) return;
  if (ec) return close("error");
  if (&d == &up_ && hello_pending_) return read_hello();
  if (target_.is_connect && d.bulk && !d.copy) return splice_readable(d);
  copy_readable(d);
}

void Connection::splice_readable(Direction& d) {
  if (!d.pipe_read) {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      d.copy = true;
      return copy_readable(d);
    }
    d.pipe_read = UniqueFd(fds[0]);
    d.pipe_write = UniqueFd(fds[1]);
    (void)::fcntl(fds[1], F_SETPIPE_SZ, kPipeBytes);
  }
  for (int turn = 0; turn < kReadsPerTurn; ++turn) {
    const ssize_t n = ::splice(d.from->native_handle(), nullptr, d.pipe_write.get(), nullptr, kPipeBytes,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return arm(d);
      if (errno == EINTR) continue;
      if ((errno == EINVAL || errno == ENOSYS) && turn == 0 && d.in_pipe == 0) {
        d.copy = true;  // a socket the kernel cannot splice from
        return copy_readable(d);
      }
      return close("error");
    }
    if (n == 0) return on_source_eof(d);
    last_activity_ = Clock::now();
    *d.counter += static_cast<std::uint64_t>(n);
    d.in_pipe += static_cast<std::size_t>(n);
    if (!flush_pipe(d)) return;
  }
  arm(d);
}

bool Connection::flush_pipe(Direction& d) {
  while (d.in_pipe > 0) {
    const ssize_t m = ::splice(d.pipe_read.get(), nullptr, d.to->native_handle(), nullptr, d.in_pipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (m < 0 && errno == EINTR) continue;
    if (m < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The receiver is slow: stop reading this side until the pipe is drained.
      d.to->async_wait(tcp::socket::wait_write, [self = shared_from_this(), &d](const error_code& e) {
        if (self->state_ != State::relaying) return;
        if (e) return self->close("error");
        self->last_activity_ = Clock::now();
        if (self->flush_pipe(d)) self->arm(d);
      });
      return false;
    }
    if (m <= 0) {
      close("error");
      return false;
    }
    d.in_pipe -= static_cast<std::size_t>(m);
  }
  return true;
}

void Connection::copy_readable(Direction& d) {
  auto& buf = server_.scratch;
  for (int turn = 0; turn < kReadsPerTurn; ++turn) {
    if (d.bulk && !d.copy) return splice_readable(d);
    std::size_t want = buf.size();
    if (d.limited) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, d.remaining));
    error_code rec;
    const std::size_t n = d.from->read_some(asio::buffer(buf.data(), want), rec);
    if (rec == asio::error::would_block || rec == asio::error::try_again) return arm(d);
    if (rec == asio::error::eof) return on_source_eof(d);
    if (rec) return close("error");
    last_activity_ = Clock::now();
    if (target_.is_connect && n == want) d.bulk = true;
    if (&d == &down_ && !target_.is_connect && !response_head_done_)
      return (void)hold_response_head(buf.data(), n);
    std::size_t forward = n;
    std::vector<std::string_view> payload;
    if (d.limited) {
      d.remaining -= n;
      d.done = d.remaining == 0;
    } else if (d.chunked) {
      const auto step = d.chunked->feed(std::string_view(buf.data(), n), payload_check_ ? &payload : nullptr);
      if (step.error) return close("error");
      forward = step.consumed;  // anything after the body is dropped
      d.done = step.done;
    }
    // Looked at before it is sent: the piece that completes a credential never leaves.
    if (&d == &up_ && body_carries_credential(std::string_view(buf.data(), forward), payload))
      return refuse_body();
    *d.counter += forward;
    error_code wec;
    std::size_t written = forward == 0 ? 0 : d.to->write_some(asio::buffer(buf.data(), forward), wec);
    if (wec == asio::error::would_block || wec == asio::error::try_again) {
      written = 0;
    } else if (wec) {
      return close("error");
    }
    if (written < forward) {
      // The receiver is slow: keep the rest, stop reading this side until it
      // is delivered. Back-pressure instead of buffering without bound.
      d.pending.assign(buf.data() + written, buf.data() + forward);
      asio::async_write(*d.to, asio::buffer(d.pending),
                        [self = shared_from_this(), &d](const error_code& e, std::size_t) {
                          if (self->state_ != State::relaying) return;
                          if (e) return self->close("error");
                          std::vector<char>().swap(d.pending);
                          self->last_activity_ = Clock::now();
                          if (!d.done) self->arm(d);
                        });
      return;
    }
    if (d.done) return;  // plain HTTP body sent; the client side is not read again
  }
  arm(d);
}

bool Connection::hold_response_head(const char* data, std::size_t n) {
  const std::size_t scanned = response_head_.size() < 3 ? 0 : response_head_.size() - 3;
  response_head_.append(data, n);
  if (response_head_.find("\r\n\r\n", scanned) == std::string::npos) {
    if (response_head_.size() > server_.config.limits.max_response_head) {
      response_head_ = std::string();
      refuse(502, reason::response_head_too_large, "failed");
      return false;
    }
    arm(down_);
    return false;
  }
  // The head is whole: it goes to the client with what came after it, then
  // the rest of the response is relayed as it comes.
  response_head_done_ = true;
  *down_.counter += response_head_.size();
  down_.pending.assign(response_head_.begin(), response_head_.end());
  response_head_ = std::string();
  asio::async_write(client_, asio::buffer(down_.pending),
                    [self = shared_from_this()](const error_code& e, std::size_t) {
                      if (self->state_ != State::relaying) return;
                      if (e) return self->close("error");
                      std::vector<char>().swap(self->down_.pending);
                      self->arm(self->down_);
                    });
  return true;
}

void Connection::on_source_eof(Direction& d) {
  if (&d == &down_ && !target_.is_connect && !response_head_done_ && !response_head_.empty()) {
    // The upstream ended inside its head: what it sent is passed on as it is.
    response_head_done_ = true;
    *down_.counter += response_head_.size();
    outgoing_ = std::move(response_head_);
    response_head_ = std::string();
    asio::async_write(client_, asio::buffer(outgoing_),
                      [self = shared_from_this()](const error_code&, std::size_t) {
                        if (self->state_ == State::relaying) self->on_source_eof(self->down_);
                      });
    return;
  }
  d.eof = true;
  error_code ig;
  if (!target_.is_connect) {
    // Upstream finished the response, or the client gave up mid-body.
    if (&d == &up_) return close("client-closed");
    log_once("eof");
    upstream_.close(ig);
    client_.shutdown(tcp::socket::shutdown_send, ig);
    state_ = State::lingering;
    deadline_ = Clock::now() + kLinger;
    return linger();
  }
  d.to->shutdown(tcp::socket::shutdown_send, ig);
  if (up_.eof && down_.eof) close("eof");
}

void Connection::refuse(int status, std::string_view why, std::string_view verdict, bool by_rule,
                        std::string address) {
  if (state_ == State::closed || state_ == State::lingering) return;
  if (kind_ != Kind::proxy && !(status == 502 && why == reason::response_head_too_large)) {
    decision_.address = std::move(address);
    return reset(why, verdict, by_rule);
  }
  decision_.status = status;
  decision_.reason = why;
  decision_.verdict = verdict;
  decision_.address = std::move(address);
  // Every refusal is listed at the end of the run, grouped by reason (a
  // pause is the kill switch, not a refusal of the run's own).
  (void)by_rule;
  if (why == reason::auth_required)
    server_.note_challenged(decision_.host);
  else if (verdict != "paused")
    server_.note_refused(decision_.host, decision_.port, why);
  log_once({});
  error_code ig;
  upstream_.close(ig);
  const bool host_checked = !target_.endpoint.host.empty();
  outgoing_ = response(status, why, host_checked ? target_.endpoint.host : std::string());
  head_ = std::string();
  request_ = {};
  state_ = State::lingering;
  deadline_ = Clock::now() + kLinger;
  asio::async_write(client_, asio::buffer(outgoing_),
                    [self = shared_from_this()](const error_code& ec, std::size_t) {
                      if (self->state_ != State::lingering) return;
                      if (ec) return self->close("error");
                      error_code e;
                      self->client_.shutdown(tcp::socket::shutdown_send, e);
                      self->linger();
                    });
}

void Connection::reset(std::string_view why, std::string_view verdict, bool by_rule) {
  if (state_ == State::closed) return;
  decision_.reason = why;
  decision_.verdict = verdict;
  if (by_rule) server_.note_refused(decision_.host, decision_.port, why);
  // SO_LINGER 0: the close sends a reset, so the program sees "connection
  // reset" at once instead of a clean end it could take for an answer.
  const ::linger hard{1, 0};
  ::setsockopt(client_.native_handle(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  close(why);
}

// Reads and drops what the client still sends until it closes: closing with
// unread input would reset the connection and could destroy our answer.
void Connection::linger() {
  client_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
    if (self->state_ != State::lingering) return;
    if (ec) return self->close("error");
    auto& buf = self->server_.scratch;
    for (int turn = 0; turn < kReadsPerTurn; ++turn) {
      error_code rec;
      self->client_.read_some(asio::buffer(buf.data(), buf.size()), rec);
      if (rec == asio::error::would_block || rec == asio::error::try_again) return self->linger();
      if (rec) return self->close("eof");
    }
    self->linger();
  });
}

void Connection::log_once(std::string_view how) {
  if (logged_) return;
  logged_ = true;
  decision_.closed = how;
  decision_.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
  server_.log.write(decision_);
}

void Connection::close(std::string_view how) {
  if (state_ == State::closed) return;
  // A client that vanished before sending a whole head asked nothing: no line.
  if (decision_.verdict.empty()) logged_ = true;
  log_once(how);
  state_ = State::closed;
  error_code ig;
  client_.close(ig);
  upstream_.close(ig);
  if (delay_) delay_->cancel();
  server_.remove(shared_from_this());
}

void Connection::abort(std::string_view how) {
  if (state_ == State::closed) return;
  // The broker's abort_all ends a terminated connection through on_terminated;
  // one still here is closed all the same.
  if (!logged_ && state_ != State::relaying) {
    decision_.verdict = how == "cut" ? std::string_view("paused") : std::string_view("denied");
    decision_.reason = how == "cut" ? reason::paused : reason::stopped;
  }
  close(how);
}

void Connection::check_deadline(Clock::time_point now) {
  const auto& limits = server_.config.limits;
  switch (state_) {
    case State::head:
      if (now - started_ >= limits.header_timeout) refuse(408, reason::header_timeout);
      break;
    case State::sniffing:
      if (now - started_ >= limits.header_timeout) reset(reason::header_timeout, "denied", false);
      break;
    case State::resolving:
    case State::connecting:
      if (now >= deadline_) refuse(504, reason::connect_timeout, "failed");
      break;
    case State::relaying:
      if (now - last_activity_ >= limits.idle_timeout) close("idle-timeout");
      break;
    case State::lingering:
      if (now >= deadline_) close("eof");
      break;
    case State::terminated:  // the broker keeps its own time limits
    case State::auth_wait:
    case State::closed:
      break;
  }
}

}  // namespace px::proxy
