#pragma once
// One side of a relayed connection: TLS over `Next` (a terminated host), or
// `Next` itself (a model server on this machine that speaks plain HTTP, which
// the broker sits in front of so the run holds a placeholder there too). The
// relay reads, writes and ends it the same way either way; only a TLS stream
// has handshakes and an SSL object.
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <optional>
#include <utility>

namespace px::broker {

template <class Next>
class RelayStream {
 public:
  using executor_type = typename Next::executor_type;
  using lowest_layer_type = typename Next::lowest_layer_type;

  // `context` is used (and must outlive the stream) only when `tls`.
  RelayStream(Next next, boost::asio::ssl::context* context, bool tls) {
    if (tls)
      tls_.emplace(std::move(next), *context);
    else
      plain_.emplace(std::move(next));
  }

  bool tls() const { return tls_.has_value(); }
  executor_type get_executor() { return tls_ ? tls_->get_executor() : plain_->get_executor(); }
  lowest_layer_type& lowest_layer() { return tls_ ? tls_->lowest_layer() : plain_->lowest_layer(); }
  // TLS only.
  SSL* native_handle() { return tls_->native_handle(); }
  template <class Handler>
  void async_handshake(boost::asio::ssl::stream_base::handshake_type type, Handler&& handler) {
    tls_->async_handshake(type, std::forward<Handler>(handler));
  }

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_)
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    else
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
  }
  template <class Buffers, class Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (tls_)
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    else
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
  }

  // The end of what this side sends: TLS's close_notify, or the socket's
  // write side shut down. The handler runs through the executor.
  template <class Handler>
  void async_shutdown(Handler&& handler) {
    if (tls_) return tls_->async_shutdown(std::forward<Handler>(handler));
    boost::system::error_code ec;
    plain_->lowest_layer().shutdown(boost::asio::socket_base::shutdown_send, ec);
    boost::asio::post(get_executor(), [h = std::forward<Handler>(handler), ec]() mutable { h(ec); });
  }

 private:
  std::optional<boost::asio::ssl::stream<Next>> tls_;
  std::optional<Next> plain_;
};

}  // namespace px::broker
