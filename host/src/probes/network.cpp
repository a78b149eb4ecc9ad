// The network: straight to the internet, around the proxy, to the host's
// sockets; and the run's own loopback (ordinary work: test servers).
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "probes/catalog.hpp"

namespace px::probes {
namespace {

// A non-blocking connect waited for (3 s): a filtered address answers
// ETIMEDOUT instead of hanging the probe.
Answer net_finish_connect(int s, const sockaddr* addr, socklen_t len) {
  Answer out{"OPEN", ""};
  if (::connect(s, addr, len) != 0) {
    if (errno == EINPROGRESS) {
      pollfd p{s, POLLOUT, 0};
      int e = ETIMEDOUT;
      if (::poll(&p, 1, 3000) > 0) {
        socklen_t l = sizeof e;
        ::getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l);
      }
      if (e != 0) out.token = errno_token(e);
    } else {
      out = by_errno(-1);
    }
  }
  ::close(s);
  return out;
}

sockaddr_in net_ipv4(const std::string& ip, const std::string& port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port.c_str())));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

Answer net_tcp(const Args& a) {
  const sockaddr_in addr = net_ipv4(a[0], a[1]);
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return by_errno(-1);
  return net_finish_connect(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
}

// Resolves, then connects over TCP: the way a program reaches a name.
Answer net_connect(const Args& a) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(a[0].c_str(), a[1].c_str(), &hints, &res) != 0 || !res) return {"EAI", ""};
  const int s = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  Answer out = s < 0 ? by_errno(-1) : net_finish_connect(s, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  return out;
}

Answer net_resolve(const Args& a) {
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(a[0].c_str(), "443", nullptr, &res);
  if (res) ::freeaddrinfo(res);
  return {rc == 0 ? "OPEN" : "EAI", ""};
}

// A DNS query (example.com, type A) to a server of the caller's choosing,
// around the run's resolver: OPEN only when an answer came back.
Answer net_udp_dns(const Args& a) {
  const sockaddr_in addr = net_ipv4(a[0], "53");
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return by_errno(-1);
  static const unsigned char q[] = {0x12, 0x34, 1,   0,   0,   1, 0,   0,   0,   0, 0, 0, 7, 'e', 'x',
                                    'a',  'm',  'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
  Answer out;
  if (::sendto(s, q, sizeof q, 0, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
    out = by_errno(-1);
  } else {
    pollfd p{s, POLLIN, 0};
    char reply[512];
    out = ::poll(&p, 1, 3000) <= 0 ? Answer{"ETIMEDOUT", ""} : by_errno(::recv(s, reply, sizeof reply, 0));
  }
  ::close(s);
  return out;
}

// A path socket, or (abstract) a name in the abstract namespace.
Answer net_unix(const std::string& name, bool abstract) {
  sockaddr_un u{};
  u.sun_family = AF_UNIX;
  const std::size_t off = abstract ? 1 : 0;
  if (name.size() > sizeof u.sun_path - 1 - off) return {"ENAMETOOLONG", ""};
  std::memcpy(u.sun_path + off, name.data(), name.size());
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return by_errno(-1);
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + off + name.size());
  return net_finish_connect(s, reinterpret_cast<const sockaddr*>(&u), len);
}
Answer net_unix_path(const Args& a) {
  return net_unix(a[0], false);
}
Answer net_unix_abstract(const Args& a) {
  return net_unix(a[0], true);
}

Answer net_bind(const Args& a) {
  const sockaddr_in addr = net_ipv4("127.0.0.1", a[0]);
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return by_errno(-1);
  Answer out = by_errno(::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr));
  ::close(s);
  return out;
}

// A server on the run's own 127.0.0.1:PORT and a client of it, a byte each way.
Answer net_serve(const Args& a) {
  const sockaddr_in addr = net_ipv4("127.0.0.1", a[0]);
  const auto* sa = reinterpret_cast<const sockaddr*>(&addr);
  const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(l, sa, sizeof addr) != 0 || ::listen(l, 4) != 0) return by_errno(-1);
  const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(c, sa, sizeof addr) != 0) return by_errno(-1);
  const int s = ::accept(l, nullptr, nullptr);
  char b = 0;
  if (s < 0 || ::write(c, "x", 1) != 1 || ::read(s, &b, 1) != 1 || ::write(s, "y", 1) != 1 ||
      ::read(c, &b, 1) != 1 || b != 'y')
    return by_errno(-1);
  return {"OPEN", ""};
}

constexpr Probe kNetworkProbes[] = {
    {"tcp", "IP PORT", 2, net_tcp},      {"connect", "HOST PORT", 2, net_connect},
    {"resolve", "NAME", 1, net_resolve}, {"udp-dns", "IP", 1, net_udp_dns},
    {"unix", "PATH", 1, net_unix_path},  {"abstract", "NAME", 1, net_unix_abstract},
    {"bind", "PORT", 1, net_bind},       {"serve", "PORT", 1, net_serve},
};

}  // namespace

std::span<const Probe> network_probes() {
  return kNetworkProbes;
}

}  // namespace px::probes
