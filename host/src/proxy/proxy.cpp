#include "proxy/proxy.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "common/redact.hpp"
#include "common/socket_request.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class ProxyServer::Impl : public ServerCore {
 public:
  using ServerCore::ServerCore;
};

namespace {

Result<std::vector<asio::ip::address>> system_resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
  if (rc != 0)
    return Error::not_found("The host " + host + " could not be resolved: " + gai_strerror(rc) + ".");
  std::vector<asio::ip::address> out;
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET) {
      sockaddr_in sin{};
      std::memcpy(&sin, ai->ai_addr, sizeof sin);
      out.emplace_back(asio::ip::address_v4(ntohl(sin.sin_addr.s_addr)));
    } else if (ai->ai_family == AF_INET6) {
      sockaddr_in6 sin6{};
      std::memcpy(&sin6, ai->ai_addr, sizeof sin6);
      asio::ip::address_v6::bytes_type bytes;
      std::memcpy(bytes.data(), &sin6.sin6_addr, bytes.size());
      out.emplace_back(asio::ip::address_v6(bytes));
    }
  }
  ::freeaddrinfo(list);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::unique_ptr<ProxyServer::Impl>> make_impl(ProxyConfig config, Resolver resolver) {
  PX_TRY_ASSIGN(auto valid, validate(std::move(config)));
  register_secret(valid.password);
  DecisionLog log;
  if (!valid.log_path.empty()) {
    PX_TRY_ASSIGN(log, DecisionLog::open(valid.log_path));
  }
  if (!resolver) resolver = system_resolve;
  return std::make_unique<ProxyServer::Impl>(std::move(valid), std::move(resolver), std::move(log));
}

}  // namespace

Resolver system_resolver() {
  return system_resolve;
}

Result<ProxyConfig> validate(ProxyConfig config) {
  if (config.password.size() < 16) {
    return Error::invalid(
        "The proxy password is shorter than 16 characters; use a generated one (generate_password) or a "
        "longer "
        "password file.");
  }
  if (config.mode == NetworkMode::online && !config.allowed_hosts.empty()) {
    return Error::invalid(
        "The network is set to online, which allows every host, and also lists allowed hosts; "
        "choose one of the two.");
  }
  std::vector<std::string> texts;
  config.rules.clear();
  for (const auto& h : config.allowed_hosts) {
    PX_TRY_ASSIGN(auto rule, parse_host_rule(h));
    texts.push_back(rule.text());
    config.rules.push_back(std::move(rule));
  }
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  config.allowed_hosts = std::move(texts);
  if (std::find(config.allowed_ports.begin(), config.allowed_ports.end(), 0) != config.allowed_ports.end()) {
    return Error::invalid("Port 0 cannot be allowed; give ports between 1 and 65535.");
  }
  const auto& l = config.limits;
  if (l.head.max_request_line == 0 || l.head.max_header_bytes == 0 || l.head.max_header_fields == 0 ||
      l.max_connections == 0 || l.header_timeout.count() <= 0 || l.idle_timeout.count() <= 0 ||
      l.connect_timeout.count() <= 0) {
    return Error::invalid("Every proxy limit (sizes, timeouts, connections) must be greater than zero.");
  }
  return config;
}

ProxyServer::ProxyServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProxyServer::~ProxyServer() {
  if (impl_) impl_->stop();
}

Result<std::unique_ptr<ProxyServer>> ProxyServer::listen(ProxyConfig config, const std::string& address,
                                                         std::uint16_t port, Resolver resolver) {
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(address, ec);
  if (ec) {
    return Error::invalid("The listen address '" + address.substr(0, 100) +
                          "' is not an IP address; give one such as 127.0.0.1.");
  }
  PX_TRY_ASSIGN(auto impl, make_impl(std::move(config), std::move(resolver)));
  const tcp::endpoint ep(addr, port);
  const std::string where =
      (addr.is_v6() ? "[" + addr.to_string() + "]" : addr.to_string()) + ":" + std::to_string(port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(netns::kListenBacklog, ec);
  if (ec) return Error::io("listen on " + where + " for the proxy", ec.value());
  ::fcntl(impl->acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
  impl->start();
  return std::unique_ptr<ProxyServer>(new ProxyServer(std::move(impl)));
}

Result<std::unique_ptr<ProxyServer>> ProxyServer::adopt(ProxyConfig config, UniqueFd listening_socket,
                                                        Resolver resolver) {
  const int fd = listening_socket.get();
  int type = 0;
  int accepting = 0;
  socklen_t len = sizeof type;
  if (!listening_socket || ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
    return Error::invalid("The socket handed to the proxy is not a TCP socket.");
  }
  len = sizeof accepting;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) {
    return Error::invalid(
        "The socket handed to the proxy is not listening; call listen() before passing it.");
  }
  sockaddr_storage ss{};
  len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
      (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
    return Error::invalid("The socket handed to the proxy is not an IPv4 or IPv6 socket.");
  }
  PX_TRY_ASSIGN(auto impl, make_impl(std::move(config), std::move(resolver)));
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  boost::system::error_code ec;
  impl->acceptor.assign(ss.ss_family == AF_INET ? tcp::v4() : tcp::v6(), fd, ec);
  if (ec) return Error::io("adopt the proxy's listening socket", ec.value());
  listening_socket.release();
  impl->start();
  return std::unique_ptr<ProxyServer>(new ProxyServer(std::move(impl)));
}

std::string ProxyServer::listen_address() const {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  if (ec) return {};
  const auto a = ep.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(ep.port());
}

std::uint16_t ProxyServer::port() const {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

Status ProxyServer::serve_run_network(RunNetwork network) {
  return impl_->serve_run_network(std::move(network));
}
void ProxyServer::cut() {
  impl_->cut();
}
void ProxyServer::restore() {
  impl_->restore();
}
bool ProxyServer::is_cut() const {
  return impl_->paused;
}
void ProxyServer::stop() {
  impl_->stop();
}
std::vector<RefusedHost> ProxyServer::refused_hosts() const {
  return impl_->refused_hosts();
}
void ProxyServer::change_rule(RuleChange change) {
  impl_->change_rule(std::move(change));
}
std::vector<RuleChange> ProxyServer::rule_changes() const {
  return impl_->rule_changes();
}
bool ProxyServer::allows_now(const std::string& host, std::uint16_t port) const {
  return impl_->allows_now(host, port);
}
std::vector<Question> ProxyServer::questions() const {
  return impl_->questions();
}
Status ProxyServer::answer(std::uint64_t id, bool allow, bool for_run, const std::string& by) {
  return impl_->answer(id, allow, for_run, by);
}

Result<std::string> generate_password() {
  // The kernel's CSPRNG directly: OpenSSL's RAND would first set up its
  // providers (about a millisecond of every run's start-up).
  std::array<unsigned char, 16> bytes{};
  if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    return Error::internal("The system's random generator failed; the proxy password cannot be made.");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  register_secret(out);
  return out;
}

Result<std::string> read_password_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Error::io("open the password file " + path.string(), errno);
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error::io("stat the password file " + path.string(), errno);
  if (!S_ISREG(st.st_mode))
    return Error::invalid("The password file " + path.string() + " is not a regular file.");
  if ((st.st_mode & 077) != 0) {
    return Error::policy("The password file " + path.string() +
                         " can be read by other users; run `chmod 600 " + path.string() + "` and try again.");
  }
  std::string data(4096, '\0');
  const ssize_t n = ::read(fd, data.data(), data.size());
  if (n < 0) return Error::io("read the password file " + path.string(), errno);
  data.resize(static_cast<std::size_t>(n));
  data = data.substr(0, data.find_first_of("\r\n"));
  if (data.size() < 16) {
    return Error::invalid("The password in " + path.string() +
                          " is shorter than 16 characters; use a longer one.");
  }
  register_secret(data);
  return data;
}

Status write_password_file(const std::filesystem::path& path, const std::string& password) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Error::io("create the password file " + path.string(), errno);
  UniqueFd owned(fd);
  const std::string line = password + "\n";
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    return Error::io("write the password file " + path.string(), errno);
  }
  return ok();
}

std::vector<std::pair<std::string, std::string>> proxy_environment(std::uint16_t port,
                                                                   const std::string& password,
                                                                   bool local_servers) {
  const std::string url = "http://px:" + password + "@127.0.0.1:" + std::to_string(port);
  // Without Local servers, loopback is the run's own (its test servers), so
  // clients go there directly. With it, "localhost" means this machine's
  // servers, which only the proxy can reach: nothing is exempt.
  const std::string no_proxy = local_servers ? "" : "localhost,127.0.0.1,::1";
  return {
      {"HTTP_PROXY", url},
      {"HTTPS_PROXY", url},
      {"ALL_PROXY", url},
      {"http_proxy", url},
      {"https_proxy", url},
      {"all_proxy", url},
      {"NO_PROXY", no_proxy},
      {"no_proxy", no_proxy},
      // git reads these as `-c` settings; Basic up front saves a 407 round trip.
      {"GIT_CONFIG_COUNT", "2"},
      {"GIT_CONFIG_KEY_0", "http.proxy"},
      {"GIT_CONFIG_VALUE_0", url},
      {"GIT_CONFIG_KEY_1", "http.proxyAuthMethod"},
      {"GIT_CONFIG_VALUE_1", "basic"},
  };
}

}  // namespace px::proxy
