// The relay both ways, once the upstream is connected and nobody else (the
// broker) took the connection. A tunnel's bytes pass unchanged; a plain HTTP
// request's only as its framing allows (plain_http.cpp). The proxy never
// buffers without bound: a slow receiver stops reads from the other side
// (back-pressure), and an idle tunnel holds no buffer at all.
#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/write.hpp>

#include "proxy/connection.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

void Connection::start_relay() {
  state_ = State::relaying;
  last_activity_ = Clock::now();
  request_ = {};
  if (dest_.tunnel()) {
    arm(down_);
    if (dest_.first_bytes_checked) return release_hello([](Connection& c) { c.arm(c.up_); });
    hello_pending_ = true;
    // A captured client spoke when it connected (it never waits for a 200):
    // its first bytes are usually here already.
    if (dest_.first_bytes.empty() && dest_.named == Destination::Named::captured) return read_hello();
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

void Connection::arm(Direction& d) {
  d.from->async_wait(tcp::socket::wait_read,
                     [self = shared_from_this(), &d](const error_code& ec) { self->on_readable(d, ec); });
}

void Connection::on_readable(Direction& d, const error_code& ec) {
  if (state_ != State::relaying) return;
  if (ec) return close("error");
  if (&d == &up_ && hello_pending_) return read_hello();
  if (dest_.tunnel() && d.bulk && !d.copy) return splice_readable(d);
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
    if (dest_.tunnel() && n == want) d.bulk = true;
    if (&d == &down_ && !dest_.tunnel() && !response_head_done_)
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

void Connection::on_source_eof(Direction& d) {
  if (&d == &down_ && !dest_.tunnel() && !response_head_done_ && !response_head_.empty()) {
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
  if (!dest_.tunnel()) {
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

}  // namespace px::proxy
