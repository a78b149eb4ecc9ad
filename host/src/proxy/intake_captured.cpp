// Intake of a connection captured inside the run: a program connected to the
// synthetic address the run's DNS gave a name (or to a mirrored loopback
// port). There is no request and no password; the destination is where the
// connection was made to, and run_network.cpp only listens on those addresses
// for names and ports the rule allows.
//
// HTTP and TLS speak first, so on their ports the first bytes are checked
// before anything is resolved or connected: a ClientHello must name the host
// (or none), an HTTP head's Host must be it. A connection that is neither, or
// names another host (one allowed name used as a front for another), reaches
// no upstream. What was read goes upstream first, unchanged.
#include "proxy/connection.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"
#include "proxy/tls_sni.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

void Connection::start_captured(HostPort target) {
  decision_.method = "TCP";
  decision_.host = target.host;
  decision_.port = target.port;
  dest_.named = Destination::Named::captured;
  dest_.endpoint = std::move(target);
  error_code ec;
  client_.non_blocking(true, ec);
  if (ec) return close("error");
  if (dest_.endpoint.host.empty()) return reset(reason::unknown_synthetic_address, "denied", false);
  if (server_.paused) return reset(reason::paused, "paused", false);
  if (dest_.endpoint.host != "localhost" && (dest_.endpoint.port == 80 || dest_.endpoint.port == 443)) {
    state_ = State::sniffing;
    return sniff();
  }
  // Any other port: the tunnel's first bytes are still checked for a
  // ClientHello naming another server, after the connect (tunnel_sni.cpp).
  decide();
}

void Connection::sniff() {
  client_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
    if (self->state_ != State::sniffing) return;
    if (ec) return self->close("error");
    char buf[4096];
    error_code rec;
    const std::size_t n = self->client_.read_some(asio::buffer(buf, sizeof buf), rec);
    if (rec == asio::error::would_block || rec == asio::error::try_again) return self->sniff();
    if (rec) {
      // Gone before saying anything: nothing was asked, nothing is logged.
      self->decision_.verdict = {};
      return self->close("eof");
    }
    self->decision_.bytes_up += n;
    self->dest_.first_bytes.append(buf, n);
    self->check_sniffed();
  });
}

void Connection::check_sniffed() {
  using Status = ClientHelloSni::Status;
  const std::string& seen = dest_.first_bytes;
  const auto hello = read_client_hello_sni(seen);
  switch (hello.status) {
    case Status::need_more:
      if (seen.size() >= kMaxHelloBytes) return reset(reason::tls_hello_unreadable, "denied", false);
      return sniff();
    case Status::malformed:
      return reset(reason::tls_hello_unreadable, "denied", false);
    case Status::found:
      if (!sni_matches(hello.host, dest_.endpoint.host)) return reset(reason::sni_mismatch, "denied", true);
      [[fallthrough]];
    case Status::no_sni:
      decision_.inspected = "tls-sni";
      break;
    case Status::not_tls: {
      // Plain HTTP: a whole request head whose Host names the captured host.
      Request request;
      const ParseResult parsed = parse_request_head(seen, server_.config.limits.head, request);
      if (parsed.state == ParseState::need_more) return sniff();
      if (parsed.state == ParseState::bad) return reset(reason::unexpected_protocol, "denied", false);
      const Header* host = request.find("host");
      HostPort named;
      if (request.count("host") != 1 ||
          !parse_authority(host->value, false, dest_.endpoint.port, named).ok() ||
          named.host != dest_.endpoint.host)
        return reset(reason::host_mismatch, "denied", true);
      decision_.inspected = "http-host";
      break;
    }
  }
  dest_.first_bytes_checked = true;
  decide();
}

}  // namespace px::proxy
