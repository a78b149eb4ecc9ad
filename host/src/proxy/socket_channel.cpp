#include "proxy/socket_channel.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace px::proxy {
namespace asio = boost::asio;
using boost::system::error_code;

SocketChannel::SocketChannel(asio::io_context& io, UniqueFd channel) : channel_(io) {
  error_code ec;
  channel_.assign(channel.release(), ec);
  if (ec) open_ = false;
  channel_.non_blocking(true, ec);
  if (open_) wait_reply();
}

SocketChannel::~SocketChannel() {
  close();
}

void SocketChannel::listen(std::vector<netns::Endpoint> endpoints, Done done) {
  netns::SocketRequest r;
  r.kind = netns::SocketRequest::Kind::listen;
  r.endpoints = std::move(endpoints);
  send(std::move(r), std::move(done));
}

void SocketChannel::connect(netns::Endpoint endpoint, Done done) {
  netns::SocketRequest r;
  r.kind = netns::SocketRequest::Kind::connect;
  r.endpoints.push_back(std::move(endpoint));
  send(std::move(r), std::move(done));
}

void SocketChannel::close() {
  if (!open_) return;
  open_ = false;
  error_code ig;
  channel_.close(ig);
  auto pending = std::move(pending_);
  pending_.clear();
  for (auto& [id, entry] : pending)
    entry.second(Error{ErrorKind::io, "the run's socket channel closed (the run has ended)"});
}

void SocketChannel::send(netns::SocketRequest request, Done done) {
  if (!open_) return done(Error{ErrorKind::io, "the run's socket channel is closed (the run has ended)"});
  if (request.endpoints.empty() || request.endpoints.size() > netns::kMaxEndpoints)
    return done(Error::internal("a socket request needs 1 to 64 endpoints"));
  request.id = next_id_++;
  pending_.emplace(request.id, std::make_pair(request.endpoints.size(), std::move(done)));
  outgoing_.push_back(netns::encode(request));
  flush();
}

void SocketChannel::flush() {
  while (open_ && !writing_ && !outgoing_.empty()) {
    const std::string& m = outgoing_.front();
    const ssize_t n = ::send(channel_.native_handle(), m.data(), m.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      outgoing_.pop_front();
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // The init is not reading (a frozen run): wait, never block the io thread.
      writing_ = true;
      channel_.async_wait(asio::posix::stream_descriptor::wait_write, [this](const error_code& ec) {
        writing_ = false;
        if (ec) return;
        flush();
      });
      return;
    }
    return close();
  }
}

void SocketChannel::wait_reply() {
  channel_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const error_code& ec) {
    if (ec || !open_) return;
    on_readable();
  });
}

void SocketChannel::on_readable() {
  for (;;) {
    char buf[1024];
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * netns::kMaxEndpoints)] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(channel_.native_handle(), &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return wait_reply();
    if (n <= 0) return close();  // the init is gone: the run has ended
    std::vector<UniqueFd> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.emplace_back(fd);
      }
    }
    const auto reply = netns::decode_reply(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!reply) continue;  // not ours to read: dropped (its descriptors closed)
    const auto it = pending_.find(reply->id);
    if (it == pending_.end()) continue;
    auto [expected, done] = std::move(it->second);
    pending_.erase(it);
    if (!reply->ok) {
      done(Error{ErrorKind::io, "the run could not make the socket: " + reply->message});
    } else if (fds.size() != expected) {
      done(Error::internal("the run's init sent " + std::to_string(fds.size()) + " sockets for " +
                           std::to_string(expected)));
    } else {
      done(std::move(fds));
    }
    if (!open_) return;
  }
}

}  // namespace px::proxy
