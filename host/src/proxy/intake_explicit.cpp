// Intake of a client of the proxy (HTTP_PROXY, git's http.proxy): a CONNECT
// or a plain HTTP request in absolute form, with the run's password.
//
// Everything here is bytes from inside the run. Nothing of it is resolved,
// connected to or echoed before the head is whole and passed the strict
// parser (request_parser.hpp: what two parsers could read differently is
// refused, not repaired), the password is checked and the target reads as a
// plain name. Only then does the Destination go to the decision (upstream.cpp).
#include <boost/asio/steady_timer.hpp>
#include <utility>

#include "proxy/connection.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

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

}  // namespace

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
  check_password();
}

void Connection::check_password() {
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
  take_request();
}

void Connection::take_request() {
  const Verdict v = interpret(request_, target_);
  dest_.named = target_.is_connect ? Destination::Named::connect : Destination::Named::http_request;
  // The host a refusal echoes: interpret() fills it with a name that passed
  // the check, or with the IP literal it refused, and leaves it empty else.
  dest_.endpoint = target_.endpoint;
  if (!dest_.endpoint.host.empty()) {
    decision_.host = dest_.endpoint.host;
    decision_.port = dest_.endpoint.port;
  }
  // 127.0.0.1 and [::1] are read whole but refused as IP literals unless
  // Local servers is on: then they are this machine, like localhost.
  const bool loopback_literal = v.reason == reason::ip_literal && is_loopback_name(dest_.endpoint.host);
  if (!v.ok() && !(loopback_literal && server_.config.local_port_allowed(dest_.endpoint.port)))
    return refuse(v.status, v.reason);
  // What the client sent with its head. A CONNECT's bytes follow the 200 into
  // the tunnel. A plain request keeps its head as sent: the broker looks
  // through it, and takes it whole for a server it sits in front of; the
  // upstream gets it rewritten (plain_http.cpp).
  if (!dest_.tunnel() && names_run_service(dest_.endpoint)) return serve_run_service();
  if (dest_.tunnel())
    dest_.first_bytes = head_.substr(request_.head_size);
  else
    dest_.first_bytes = std::move(head_);
  head_ = std::string();
  decide();
}

}  // namespace px::proxy
