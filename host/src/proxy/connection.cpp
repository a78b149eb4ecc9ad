// The end of a connection, whatever way it came in: refusals (an HTTP answer
// with its reason for a client of the proxy, a reset for a captured or
// published one), the drain after an answer, the one log line, the deadlines.
// The steps before (intake, decision, upstream, pump) are listed in
// connection.hpp.
#include "proxy/connection.hpp"

#include <sys/socket.h>

#include <boost/asio/write.hpp>
#include <utility>

#include "proxy/http_status.hpp"
#include "proxy/reasons.hpp"
#include "proxy/refusal_text.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

std::string response(int status, std::string_view reason, const std::string& host, std::string_view run_id) {
  const std::string body = explain_refusal(reason, host, run_id);
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_text(status)) + "\r\n";
  if (status == 407) r += "Proxy-Authenticate: Basic realm=\"parallex\"\r\n";
  r += "x-proxy-error: " + std::string(reason) + "\r\n";
  r += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
       "\r\nConnection: close\r\n\r\n" + body;
  return r;
}

// "127.0.0.1:50412", "[::1]:8080".
std::string endpoint_text(const tcp::endpoint& ep) {
  const std::string a = ep.address().to_string();
  return (ep.address().is_v6() ? "[" + a + "]" : a) + ":" + std::to_string(ep.port());
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
  // The intake set the destination's host only once it passed the name check.
  send_final(response(status, why, dest_.endpoint.host, server_.config.run_id));
}

void Connection::send_final(std::string answer) {
  error_code ig;
  upstream_.close(ig);
  outgoing_ = std::move(answer);
  head_ = std::string();
  dest_.first_bytes = std::string();
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

std::string Connection::client_address() const {
  error_code ec;
  const tcp::endpoint ep = client_.remote_endpoint(ec);
  return ec ? std::string() : endpoint_text(ep);
}

std::string Connection::server_address() const {
  error_code ec;
  const tcp::endpoint ep = client_.local_endpoint(ec);
  return ec ? std::string() : endpoint_text(ep);
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
    case State::asking:      // the question's deadline is the server's (ServerCore::sweep)
    case State::terminated:  // the broker keeps its own time limits
    case State::auth_wait:
    case State::closed:
      break;
  }
}

}  // namespace px::proxy
