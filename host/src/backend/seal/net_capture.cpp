#include "backend/seal/net_capture.hpp"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/seal/sys.hpp"
#include "common/socket_request.hpp"

namespace px::seal::net {
namespace {

constexpr const char* kV4Base = "198.18.0.0";
constexpr std::uint16_t kDnsPort = 53;

// One rtnetlink request, answered with an acknowledgement.
template <class Request>
Status rtnetlink(Request& req, const std::string& what) {
  UniqueFd nl(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!nl) return sys_error("socket(AF_NETLINK, NETLINK_ROUTE)");
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(nl.get(), &req, req.header.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) <
      0)
    return sys_error("send " + what);
  char reply[512];
  const ssize_t n = ::recv(nl.get(), reply, sizeof reply, 0);
  if (n < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(nlmsgerr))))
    return sys_error("read the answer to " + what);
  const auto* answer = reinterpret_cast<const nlmsghdr*>(reply);
  if (answer->nlmsg_type != NLMSG_ERROR)
    return Error::internal("rtnetlink answered " + what + " with message type " +
                           std::to_string(answer->nlmsg_type));
  nlmsgerr err{};
  std::memcpy(&err, reply + NLMSG_HDRLEN, sizeof err);
  if (err.error != 0) return sys_error(what, -err.error);
  return ok();
}

template <class Request>
void add_attribute(Request& req, unsigned short type, const void* data, std::size_t len) {
  auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&req) + NLMSG_ALIGN(req.header.nlmsg_len));
  rta->rta_type = type;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(len));
  std::memcpy(reinterpret_cast<char*>(rta) + RTA_LENGTH(0), data, len);
  req.header.nlmsg_len = NLMSG_ALIGN(req.header.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

// A request that creates one object (a route, an address), acknowledged:
// its header, its fixed part (`Body`) and room for a few attributes.
template <class Body>
struct NewRequest {
  nlmsghdr header;
  Body body;
  char attributes[64];
};

template <class Body>
NewRequest<Body> new_request(unsigned short type) {
  NewRequest<Body> req{};
  req.header.nlmsg_len = NLMSG_LENGTH(sizeof(Body));
  req.header.nlmsg_type = type;
  req.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
  req.header.nlmsg_seq = 1;
  return req;
}

// `ip route add local PREFIX dev lo`: every address of PREFIX is this
// namespace's own (AnyIP), without configuring each one.
Status add_local_route(int family, const void* address, std::size_t address_len, unsigned prefix_len,
                       const std::string& shown) {
  auto req = new_request<rtmsg>(RTM_NEWROUTE);
  req.body.rtm_family = static_cast<unsigned char>(family);
  req.body.rtm_dst_len = static_cast<unsigned char>(prefix_len);
  req.body.rtm_table = RT_TABLE_LOCAL;
  req.body.rtm_protocol = RTPROT_STATIC;
  req.body.rtm_scope = RT_SCOPE_HOST;
  req.body.rtm_type = RTN_LOCAL;
  add_attribute(req, RTA_DST, address, address_len);
  const int lo = static_cast<int>(::if_nametoindex("lo"));
  if (lo == 0) return sys_error("if_nametoindex(lo)");
  add_attribute(req, RTA_OIF, &lo, sizeof lo);
  return rtnetlink(req, "route add local " + shown + " dev lo");
}

// `ip addr add ADDRESS dev lo` (one address, never handed to a name). glibc's
// getaddrinfo with AI_ADDRCONFIG (getent ahosts, many programs) asks for a
// family only when an address of it other than loopback is configured: with
// lo alone, it would ask the run's DNS nothing.
Status add_address(int family, const void* address, std::size_t address_len, const std::string& shown) {
  auto req = new_request<ifaddrmsg>(RTM_NEWADDR);
  req.body.ifa_family = static_cast<unsigned char>(family);
  req.body.ifa_prefixlen = static_cast<unsigned char>(address_len * 8);
  req.body.ifa_flags = family == AF_INET6 ? IFA_F_NODAD : 0;
  req.body.ifa_scope = RT_SCOPE_HOST;
  const unsigned lo = ::if_nametoindex("lo");
  if (lo == 0) return sys_error("if_nametoindex(lo)");
  req.body.ifa_index = lo;
  add_attribute(req, IFA_LOCAL, address, address_len);
  add_attribute(req, IFA_ADDRESS, address, address_len);
  return rtnetlink(req, "addr add " + shown + " dev lo");
}

Result<UniqueFd> dns_socket(int family, int type) {
  UniqueFd fd(::socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const char* what = family == AF_INET ? "127.0.0.1:53" : "[::1]:53";
  if (!fd) return sys_error(std::string("socket for the run's DNS on ") + what);
  const int on = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  int rc;
  if (family == AF_INET) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(kDnsPort);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  } else {
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(kDnsPort);
    sin6.sin6_addr = in6addr_loopback;
    rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sin6), sizeof sin6);
  }
  if (rc != 0) return sys_error(std::string("bind the run's DNS on ") + what);
  if (type == SOCK_STREAM && ::listen(fd.get(), netns::kListenBacklog) != 0)
    return sys_error(std::string("listen for the run's DNS on ") + what);
  return fd;
}

struct Address {
  int family = AF_UNSPEC;
  in_addr v4{};
  in6_addr v6{};
};

std::optional<Address> parse_address(const std::string& text) {
  Address a;
  if (::inet_pton(AF_INET, text.c_str(), &a.v4) == 1) {
    a.family = AF_INET;
    return a;
  }
  if (::inet_pton(AF_INET6, text.c_str(), &a.v6) == 1) {
    a.family = AF_INET6;
    return a;
  }
  return std::nullopt;
}

bool in_synthetic(const Address& a, const SyntheticRanges& r) {
  if (a.family == AF_INET) {
    const std::uint32_t mask = ~std::uint32_t{0} << (32 - r.v4_bits);
    return (ntohl(a.v4.s_addr) & mask) == (ntohl(r.v4_base.s_addr) & mask);
  }
  return r.v6_prefix && std::memcmp(a.v6.s6_addr, r.v6_prefix->s6_addr, 8) == 0;
}

bool is_loopback(const Address& a) {
  if (a.family == AF_INET) return ntohl(a.v4.s_addr) == INADDR_LOOPBACK;
  return std::memcmp(&a.v6, &in6addr_loopback, sizeof a.v6) == 0;
}

socklen_t to_sockaddr(const Address& a, std::uint16_t port, sockaddr_storage& ss) {
  std::memset(&ss, 0, sizeof ss);
  if (a.family == AF_INET) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    sin->sin_addr = a.v4;
    return sizeof(sockaddr_in);
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(port);
  sin6->sin6_addr = a.v6;
  return sizeof(sockaddr_in6);
}

// A listening socket on one endpoint. IPv6 needs IP_FREEBIND: unlike IPv4, its
// bind checks for an address configured on an interface, not for a local route.
Result<UniqueFd> make_listener(const Address& a, std::uint16_t port, const std::string& shown) {
  UniqueFd fd(::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return sys_error("socket for " + shown);
  const int on = 1;
  if (a.family == AF_INET6) {
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    ::setsockopt(fd.get(), SOL_IP, IP_FREEBIND, &on, sizeof on);
  }
  sockaddr_storage ss{};
  const socklen_t len = to_sockaddr(a, port, ss);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return sys_error("bind " + shown);
  if (::listen(fd.get(), netns::kListenBacklog) != 0) return sys_error("listen on " + shown);
  return fd;
}

Result<UniqueFd> make_connection(const Address& a, std::uint16_t port, const std::string& shown) {
  UniqueFd fd(::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return sys_error("socket for " + shown);
  sockaddr_storage ss{};
  const socklen_t len = to_sockaddr(a, port, ss);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS)
    return sys_error("connect to " + shown);
  return fd;
}

bool send_reply(int channel, const netns::SocketReply& reply, const std::vector<UniqueFd>& fds) {
  const std::string text = netns::encode_reply(reply);
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * netns::kMaxEndpoints));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    for (std::size_t i = 0; i < fds.size(); ++i) {
      const int fd = fds[i].get();
      std::memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof fd);
    }
  }
  ssize_t n;
  do n = ::sendmsg(channel, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n >= 0;
}

}  // namespace

Result<CaptureSockets> open_capture() {
  CaptureSockets out;
  ::inet_pton(AF_INET, kV4Base, &out.ranges.v4_base);
  PX_TRY(add_local_route(AF_INET, &out.ranges.v4_base, sizeof out.ranges.v4_base, out.ranges.v4_bits,
                         std::string(kV4Base) + "/15"));
  PX_TRY(add_address(AF_INET, &out.ranges.v4_base, sizeof out.ranges.v4_base, kV4Base));
  // A unique-local /64 with a random global id (RFC 4193), so that an address
  // a program kept from another run names nothing in this one.
  in6_addr prefix{};
  prefix.s6_addr[0] = 0xfd;
  if (::getrandom(&prefix.s6_addr[1], 5, 0) != 5) return sys_error("getrandom for the run's IPv6 prefix");
  char shown[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, &prefix, shown, sizeof shown);
  auto v6 = add_local_route(AF_INET6, &prefix, sizeof prefix, 64, std::string(shown) + "/64");
  if (v6) v6 = add_address(AF_INET6, &prefix, sizeof prefix, shown);
  if (v6) {
    out.ranges.v6_prefix = prefix;
  } else {
    out.notes.push_back("the run's DNS answers IPv4 only: " + v6.error().message);
  }
  for (int family : {AF_INET, AF_INET6}) {
    if (family == AF_INET6 && !out.ranges.v6_prefix) break;
    auto udp = dns_socket(family, SOCK_DGRAM);
    auto tcp = udp ? dns_socket(family, SOCK_STREAM) : Result<UniqueFd>(udp.error());
    if (!udp || !tcp) {
      const Error& e = udp ? tcp.error() : udp.error();
      if (family == AF_INET) return e;
      out.notes.push_back("the run's DNS listens on 127.0.0.1 only: " + e.message);
      break;
    }
    out.dns_udp.push_back(std::move(udp).value());
    out.dns_tcp.push_back(std::move(tcp).value());
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return sys_error("socketpair for the run's socket channel");
  out.channel_mine = UniqueFd(sv[0]);
  out.channel_theirs = UniqueFd(sv[1]);
  return out;
}

std::string format_ranges(const SyntheticRanges& r) {
  char v4[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &r.v4_base, v4, sizeof v4);
  std::string out = std::string(v4) + "/" + std::to_string(r.v4_bits);
  if (r.v6_prefix) {
    char v6[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, &*r.v6_prefix, v6, sizeof v6);
    out += " " + std::string(v6) + "/64";
  }
  return out;
}

std::optional<SyntheticRanges> parse_ranges(const std::string& text) {
  SyntheticRanges r;
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos || ::inet_pton(AF_INET, text.substr(0, slash).c_str(), &r.v4_base) != 1)
    return std::nullopt;
  const std::size_t space = text.find(' ', slash);
  try {
    r.v4_bits = static_cast<unsigned>(std::stoul(text.substr(slash + 1, space - slash - 1)));
  } catch (...) {
    return std::nullopt;
  }
  if (r.v4_bits < 8 || r.v4_bits > 30) return std::nullopt;
  if (space != std::string::npos) {
    const std::string v6 = text.substr(space + 1);
    const std::size_t s6 = v6.find('/');
    in6_addr prefix{};
    if (s6 == std::string::npos || v6.substr(s6) != "/64" ||
        ::inet_pton(AF_INET6, v6.substr(0, s6).c_str(), &prefix) != 1)
      return std::nullopt;
    r.v6_prefix = prefix;
  }
  return r;
}

bool serve_socket_request(int channel, const SyntheticRanges& ranges) {
  char buf[4096];
  ssize_t n;
  do n = ::recv(channel, buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  const auto request = netns::decode_request(std::string_view(buf, static_cast<std::size_t>(n)));
  if (!request) return send_reply(channel, {false, 0, "malformed request"}, {});
  std::vector<UniqueFd> made;
  for (const auto& e : request->endpoints) {
    const std::string shown = e.address + " port " + std::to_string(e.port);
    const auto address = parse_address(e.address);
    const bool listen = request->kind == netns::SocketRequest::Kind::listen;
    // Listeners only on the run's synthetic ranges and its loopback; connections
    // only to its loopback. Anything else is refused, whoever asked.
    if (!address ||
        (listen ? !(in_synthetic(*address, ranges) || is_loopback(*address)) : !is_loopback(*address)))
      return send_reply(channel, {false, request->id, "refused: " + shown + " is not the run's to use"}, {});
    auto fd = listen ? make_listener(*address, e.port, shown) : make_connection(*address, e.port, shown);
    if (!fd) return send_reply(channel, {false, request->id, fd.error().message}, {});
    made.push_back(std::move(fd).value());
  }
  return send_reply(channel, {true, request->id, {}}, made);
}

}  // namespace px::seal::net
