// A tunnel's first client bytes (a CONNECT's after the 200, a captured
// connection's when they were not checked before the connect) are held back
// from the upstream until they show what they are. A TLS ClientHello must ask
// for the tunnel's own host, or for none: a tunnel to an allowed front end
// cannot carry a TLS session for another site behind it (domain fronting).
// Anything that is not TLS (SSH, a database, a server that speaks first)
// passes as raw TCP.
#include <utility>

#include "proxy/connection.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"
#include "proxy/tls_sni.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using boost::system::error_code;

void Connection::read_hello() {
  char buf[4096];
  error_code rec;
  const std::size_t n = client_.read_some(asio::buffer(buf, sizeof buf), rec);
  if (rec == asio::error::would_block || rec == asio::error::try_again) return arm(up_);
  if (rec == asio::error::eof) {
    // The client gave up before a whole ClientHello: pass on what it sent, then its end.
    hello_pending_ = false;
    decision_.inspected = "none";
    return release_hello([](Connection& c) { c.on_source_eof(c.up_); });
  }
  if (rec) return close("error");
  last_activity_ = Clock::now();
  *up_.counter += n;
  dest_.first_bytes.append(buf, n);
  decide_hello();
}

void Connection::decide_hello() {
  using Status = ClientHelloSni::Status;
  const auto hello = read_client_hello_sni(dest_.first_bytes);
  if (hello.status == Status::need_more) {
    if (dest_.first_bytes.size() >= kMaxHelloBytes) return refuse_tunnel(reason::tls_hello_unreadable);
    return arm(up_);
  }
  if (hello.status == Status::malformed) return refuse_tunnel(reason::tls_hello_unreadable);
  if (hello.status == Status::found && !sni_matches(hello.host, dest_.endpoint.host))
    return refuse_tunnel(reason::sni_mismatch);
  // Not TLS (relayed as raw TCP: SSH, databases, a server that speaks
  // first), no server name, or the tunnel's host itself: the tunnel is open.
  decision_.inspected = hello.status == Status::not_tls ? "none" : "tls-sni";
  hello_pending_ = false;
  release_hello([](Connection& c) { c.arm(c.up_); });
}

void Connection::release_hello(void (*then)(Connection&)) {
  if (dest_.first_bytes.empty()) return then(*this);
  outgoing_ = std::exchange(dest_.first_bytes, std::string());
  send_outgoing(upstream_, then);
}

void Connection::refuse_tunnel(std::string_view why) {
  // The 200 went out already: a proxy client is told by the close, logged
  // and listed; a captured one is reset.
  if (kind_ != Kind::proxy) return reset(why, "denied", why == reason::sni_mismatch);
  decision_.verdict = "denied";
  decision_.reason = why;
  server_.note_refused(decision_.host, decision_.port, why);
  close(why);
}

}  // namespace px::proxy
