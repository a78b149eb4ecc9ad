#include "backend/seal/net.hpp"

#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "backend/seal/sys.hpp"
#include "common/socket_request.hpp"

namespace px::seal::net {

Status enter_namespace_with_loopback() {
  if (::unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0)
    return sys_error("unshare(CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS)");
  // An ioctl, not netlink: one flag on one interface needs nothing more.
  UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) return sys_error("socket(AF_INET) to bring up lo");
  ifreq req{};
  std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
  if (::ioctl(sock.get(), SIOCGIFFLAGS, &req) != 0) return sys_error("ioctl(SIOCGIFFLAGS, lo)");
  req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP | IFF_RUNNING);
  if (::ioctl(sock.get(), SIOCSIFFLAGS, &req) != 0) return sys_error("ioctl(SIOCSIFFLAGS, lo up)");
  return ok();
}

Status allow_every_port() {
  // Per network namespace: this one's only. Writable with CAP_NET_ADMIN in
  // the namespace's user namespace, which the seal's init holds there.
  return write_file("/proc/sys/net/ipv4/ip_unprivileged_port_start", "0");
}

Result<std::pair<UniqueFd, std::uint16_t>> listen_on_loopback() {
  UniqueFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) return sys_error("socket(AF_INET, SOCK_STREAM) for the proxy");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return sys_error("bind 127.0.0.1:0 for the proxy");
  if (::listen(sock.get(), netns::kListenBacklog) != 0) return sys_error("listen on the proxy socket");
  socklen_t len = sizeof addr;
  if (::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return sys_error("getsockname of the proxy socket");
  return std::pair<UniqueFd, std::uint16_t>{std::move(sock), ntohs(addr.sin_port)};
}

}  // namespace px::seal::net
