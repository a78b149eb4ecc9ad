#include "proxy/dns_server.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>

#include "proxy/dns_message.hpp"
#include "proxy/reasons.hpp"
#include "proxy/refusal_text.hpp"
#include "proxy/run_network.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using udp = asio::ip::udp;
using boost::system::error_code;

namespace {

constexpr std::uint32_t kTtl = 60;  // the addresses hold for the whole run; short keeps caches honest
constexpr std::size_t kMaxTcpClients = 64;
constexpr auto kTcpIdle = std::chrono::seconds(10);

}  // namespace

// One TCP client: length-prefixed queries (RFC 7766), answered in order,
// until it closes or stays idle for 10 s.
class DnsServer::TcpClient : public std::enable_shared_from_this<TcpClient> {
 public:
  TcpClient(DnsServer& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), idle_(socket_.get_executor()) {}
  void start() { read(); }
  void stop() {
    error_code ig;
    idle_.cancel();
    socket_.close(ig);
  }

 private:
  void read() {
    idle_.expires_after(kTcpIdle);
    idle_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (!ec) self->finish();
    });
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      if (ec) return self->finish();
      self->on_readable();
    });
  }
  void on_readable() {
    char buf[4096];
    error_code ec;
    const std::size_t n = socket_.read_some(asio::buffer(buf, sizeof buf), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return read();
    if (ec) return finish();
    in_.append(buf, n);
    if (in_.size() > 2 + 65535) return finish();
    if (in_.size() < 2) return read();
    const std::size_t len = static_cast<unsigned char>(in_[0]) << 8 | static_cast<unsigned char>(in_[1]);
    if (in_.size() < 2 + len) return read();
    std::string query = in_.substr(2, len);
    in_.erase(0, 2 + len);
    idle_.cancel();
    const bool answered =
        server_.handle(std::move(query), [self = shared_from_this()](const std::string& answer) {
          self->out_.clear();
          self->out_ += static_cast<char>(answer.size() >> 8);
          self->out_ += static_cast<char>(answer.size() & 0xff);
          self->out_ += answer;
          asio::async_write(self->socket_, asio::buffer(self->out_),
                            [self](const error_code& wec, std::size_t) {
                              if (wec) return self->finish();
                              self->read();
                            });
        });
    // Bytes that are not DNS get no answer: the connection is closed.
    if (!answered) finish();
  }
  void finish() {
    stop();
    auto& clients = server_.clients_;
    clients.erase(std::remove(clients.begin(), clients.end(), shared_from_this()), clients.end());
  }

  DnsServer& server_;
  tcp::socket socket_;
  asio::steady_timer idle_;
  std::string in_;
  std::string out_;
};

DnsServer::DnsServer(ServerCore& core, RunNetworkService& network) : core_(core), network_(network) {}

DnsServer::~DnsServer() {
  stop();
}

namespace {

// A socket of the run's DNS, made inside the run, as an Asio object of ours.
template <class Socket, class Protocol>
Result<std::unique_ptr<Socket>> adopt(asio::io_context& io, UniqueFd fd, Protocol v4, Protocol v6) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return Error::io("read the address of the run's DNS socket", errno);
  auto socket = std::make_unique<Socket>(io);
  error_code ec;
  socket->assign(ss.ss_family == AF_INET6 ? v6 : v4, fd.get(), ec);
  if (ec) return Error::io("adopt the run's DNS socket", ec.value());
  fd.release();
  socket->non_blocking(true, ec);
  return socket;
}

}  // namespace

Status DnsServer::add_udp(UniqueFd fd) {
  PX_TRY_ASSIGN(auto socket, adopt<udp::socket>(core_.io, std::move(fd), udp::v4(), udp::v6()));
  udp_.push_back(std::move(socket));
  wait_udp(*udp_.back());
  return ok();
}

Status DnsServer::add_tcp(UniqueFd fd) {
  PX_TRY_ASSIGN(auto acceptor, adopt<tcp::acceptor>(core_.io, std::move(fd), tcp::v4(), tcp::v6()));
  tcp_.push_back(std::move(acceptor));
  wait_accept(*tcp_.back());
  return ok();
}

void DnsServer::stop() {
  *alive_ = false;
  error_code ig;
  for (auto& u : udp_) u->close(ig);
  for (auto& t : tcp_) t->close(ig);
  const auto clients = std::move(clients_);
  clients_.clear();
  for (const auto& c : clients) c->stop();
}

void DnsServer::wait_udp(udp::socket& socket) {
  socket.async_wait(udp::socket::wait_read, [this, &socket, alive = alive_](const error_code& ec) {
    if (ec || !*alive) return;
    on_udp(socket);
  });
}

void DnsServer::on_udp(udp::socket& socket) {
  for (int turn = 0; turn < 64; ++turn) {
    char buf[4096];
    udp::endpoint peer;
    error_code ec;
    const std::size_t n = socket.receive_from(asio::buffer(buf, sizeof buf), peer, 0, ec);
    if (ec) break;  // would_block: wait again; anything else is one lost datagram
    handle(std::string(buf, n), [&socket, peer, alive = alive_](const std::string& answer) {
      if (!*alive) return;
      error_code sec;
      // A datagram answer is at most 512 bytes here (one question, two records
      // at most); a full socket buffer loses it, and the client asks again.
      socket.send_to(asio::buffer(answer), peer, 0, sec);
    });
  }
  wait_udp(socket);
}

void DnsServer::wait_accept(tcp::acceptor& acceptor) {
  acceptor.async_wait(tcp::acceptor::wait_read, [this, &acceptor, alive = alive_](const error_code& ec) {
    if (ec || !*alive) return;
    for (int i = 0; i < 16; ++i) {
      const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      if (clients_.size() >= kMaxTcpClients) {
        ::close(fd);
        continue;
      }
      tcp::socket socket(core_.io);
      error_code aec;
      socket.assign(acceptor.local_endpoint(aec).protocol(), fd, aec);
      if (aec) {
        ::close(fd);
        continue;
      }
      clients_.push_back(std::make_shared<TcpClient>(*this, std::move(socket)));
      clients_.back()->start();
    }
    wait_accept(acceptor);
  });
}

bool DnsServer::handle(std::string query_bytes, std::function<void(const std::string&)> reply) {
  // The question's views point into this string: it stays where it is until
  // the (maybe later) answer is made.
  const auto query = std::make_shared<const std::string>(std::move(query_bytes));
  const dns::Parsed parsed = dns::parse_query(*query);
  Decision d;
  d.method = "DNS";
  d.port = 53;
  d.verdict = "denied";
  const dns::Question& q = parsed.question;
  switch (parsed.status) {
    case dns::ParseStatus::not_dns:
      // Not even a DNS header (or an answer sent to us): logged, not answered.
      d.reason = reason::dns_malformed;
      core_.log.write(d);
      return false;
    case dns::ParseStatus::formerr:
    case dns::ParseStatus::notimp: {
      const auto rcode =
          parsed.status == dns::ParseStatus::formerr ? dns::Rcode::formerr : dns::Rcode::notimp;
      d.reason =
          parsed.status == dns::ParseStatus::formerr ? reason::dns_malformed : reason::dns_not_implemented;
      d.rcode = dns::to_string(rcode);
      core_.log.write(d);
      reply(dns::error(q, rcode));
      return true;
    }
    case dns::ParseStatus::ok:
      break;
  }
  d.host = q.name;
  d.dns_type = dns::type_name(q.type);
  if (core_.paused) {
    d.verdict = "paused";
    d.reason = reason::paused;
    d.rcode = dns::to_string(dns::Rcode::refused);
    core_.log.write(d);
    reply(dns::error(q, dns::Rcode::refused));
    return true;
  }
  const dns::Decision decided =
      dns::decide(core_.config, q, [this](std::string_view name) { return core_.capture_ports_for(name); });
  if (!decided.name.empty()) d.host = decided.name;
  switch (decided.kind) {
    case dns::Decision::Kind::refuse:
      d.reason = decided.reason;
      d.rcode = dns::to_string(decided.rcode);
      if (decided.by_rule) core_.note_refused(decided.name, 53, decided.reason, /*dns=*/true);
      core_.log.write(d);
      // The reason travels with the answer (an extended DNS error) for a
      // program that reads it, as the proxy's answer body does for HTTP.
      reply(dns::error(
          q, decided.rcode,
          decided.by_rule ? refusal_line(decided.reason, decided.name, core_.config.run_id) : std::string()));
      return true;
    case dns::Decision::Kind::loopback: {
      d.verdict = "allowed";
      d.reason = reason::allowed;
      d.rcode = dns::to_string(dns::Rcode::noerror);
      const std::vector<asio::ip::address> loopback{asio::ip::address_v4::loopback(),
                                                    asio::ip::address_v6::loopback()};
      core_.log.write(d);
      reply(dns::answer(q, loopback, kTtl));
      return true;
    }
    case dns::Decision::Kind::synthetic:
      break;
  }
  d.reason = decided.reason;
  network_.ensure_name(decided.name, [this, query, d, reply = std::move(reply), alive = alive_](
                                         const SyntheticNames::Entry* entry, std::string_view why) mutable {
    if (!*alive) return;
    const dns::Parsed again = dns::parse_query(*query);  // views into *query, which is still there
    if (!entry) {
      d.verdict = "failed";
      d.reason = why;
      d.rcode = dns::to_string(dns::Rcode::servfail);
      core_.log.write(d);
      return reply(dns::error(again.question, dns::Rcode::servfail));
    }
    std::vector<asio::ip::address> addresses{entry->v4};
    if (entry->v6) addresses.emplace_back(*entry->v6);
    d.verdict = "allowed";  // its reason: allowed, or ask-on-connect (set below)
    d.rcode = dns::to_string(dns::Rcode::noerror);
    d.address = again.question.type == dns::kTypeAAAA ? (entry->v6 ? entry->v6->to_string() : std::string())
                                                      : entry->v4.to_string();
    core_.log.write(d);
    reply(dns::answer(again.question, addresses, kTtl));
  });
  return true;
}

}  // namespace px::proxy
