#pragma once
// A TCP socket that first hands out bytes already read from it: the proxy may
// have read the start of the client's TLS records (sent together with the
// CONNECT head, or read to find the server name of a captured connection)
// before it passes the connection to the broker. A next layer for
// boost::asio::ssl::stream.
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <string>
#include <utility>

namespace px::broker {

class PrefixedSocket {
 public:
  using socket_type = boost::asio::ip::tcp::socket;
  using executor_type = socket_type::executor_type;
  using lowest_layer_type = socket_type::lowest_layer_type;

  PrefixedSocket(socket_type socket, std::string prefix)
      : socket_(std::move(socket)), prefix_(std::move(prefix)) {}
  PrefixedSocket(PrefixedSocket&&) = default;

  executor_type get_executor() { return socket_.get_executor(); }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }
  const lowest_layer_type& lowest_layer() const { return socket_.lowest_layer(); }

  template <typename MutableBuffers, typename Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (offset_ < prefix_.size()) {
      const std::size_t n = boost::asio::buffer_copy(buffers, boost::asio::buffer(prefix_) + offset_);
      offset_ += n;
      if (offset_ == prefix_.size()) {
        std::string().swap(prefix_);
        offset_ = 0;
      }
      // Completed through the executor, never inline: an Asio handler must
      // not run inside the call that started it.
      return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
          [](auto&& h, executor_type ex, std::size_t count) {
            boost::asio::post(ex,
                              [h = std::move(h), count]() mutable { h(boost::system::error_code(), count); });
          },
          handler, socket_.get_executor(), n);
    }
    return socket_.async_read_some(buffers, std::forward<Handler>(handler));
  }

  template <typename ConstBuffers, typename Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    return socket_.async_write_some(buffers, std::forward<Handler>(handler));
  }

 private:
  socket_type socket_;
  std::string prefix_;
  std::size_t offset_ = 0;
};

}  // namespace px::broker
