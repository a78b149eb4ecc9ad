#pragma once
// The supervisor's end of a sealed run's socket channel: asks the seal's init
// (the only process inside the run's network namespace that may) for sockets
// there, without ever blocking the proxy's io thread: a frozen run (the kill
// switch's pause freezes the init too) leaves requests pending, nothing more.
// Wire format: common/socket_request.hpp. Used on the io thread only.
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/socket_request.hpp"
#include "common/unique_fd.hpp"

namespace px::proxy {

class SocketChannel {
 public:
  using Done = std::function<void(Result<std::vector<UniqueFd>>)>;

  SocketChannel(boost::asio::io_context& io, UniqueFd channel);
  ~SocketChannel();
  SocketChannel(const SocketChannel&) = delete;
  SocketChannel& operator=(const SocketChannel&) = delete;

  // Listening sockets on each endpoint, in order (all or none).
  void listen(std::vector<netns::Endpoint> endpoints, Done done);
  // A socket connecting (non-blocking, maybe still in progress) to `endpoint`.
  void connect(netns::Endpoint endpoint, Done done);
  // Fails every pending request; later ones fail at once.
  void close();

 private:
  void send(netns::SocketRequest request, Done done);
  void flush();
  void wait_reply();
  void on_readable();

  boost::asio::posix::stream_descriptor channel_;
  bool open_ = true;
  std::uint32_t next_id_ = 1;
  std::deque<std::string> outgoing_;
  bool writing_ = false;
  std::map<std::uint32_t, std::pair<std::size_t, Done>> pending_;  // id -> (descriptors expected, done)
};

}  // namespace px::proxy
