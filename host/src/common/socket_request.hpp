#pragma once
// What the supervisor asks the seal's init for over the run's socket channel
// (SOCK_SEQPACKET, one message each way), and how the init answers. The init
// is the only process that can make a socket inside the run's network
// namespace (backend/seal/net_capture.cpp): listening sockets on the run's
// synthetic addresses (capture) and on its loopback (mirrored host ports), and
// sockets connecting to its loopback (published ports).
//
//   request  "L<id> <address> <port> [<address> <port>]..."  listen on each endpoint
//            "C<id> <address> <port>"                          connect to it (non-blocking)
//   reply    "K<id>" with one descriptor per endpoint (SCM_RIGHTS), or "F<id> <message>"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace px::netns {

// The listen backlog of every socket a run's connections arrive on: the
// proxy's, the captured names' and mirrored ports' inside the run, the
// published ports' and the run's DNS. One value, so a burst of connections
// to localhost:PORT is queued like one through the proxy, not dropped into
// the client's one-second SYN retry (the kernel caps it at net.core.somaxconn).
inline constexpr int kListenBacklog = 4096;

struct Endpoint {
  std::string address;  // numeric, as inet_pton reads it ("198.18.0.5", "fd12::5")
  std::uint16_t port = 0;
};

struct SocketRequest {
  enum class Kind : char { listen = 'L', connect = 'C' } kind = Kind::listen;
  std::uint32_t id = 0;
  std::vector<Endpoint> endpoints;
};

// Descriptors one message can carry (SCM_MAX_FD is 253).
inline constexpr std::size_t kMaxEndpoints = 64;

std::string encode(const SocketRequest& request);
// nullopt for anything malformed (unknown kind, no endpoint, too many, bad port).
std::optional<SocketRequest> decode_request(std::string_view message);

struct SocketReply {
  bool ok = false;
  std::uint32_t id = 0;
  std::string message;  // why not, when !ok
};
std::string encode_reply(const SocketReply& reply);
std::optional<SocketReply> decode_reply(std::string_view message);

}  // namespace px::netns
