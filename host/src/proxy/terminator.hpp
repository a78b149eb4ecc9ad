#pragma once
// The part of a run's proxy that terminates TLS for the hosts that need it
// (a brokered credential or request rules): the credential broker,
// host/src/broker/, implements it. The proxy keeps every decision about
// *where* a connection may go (the network rule, the resolved address, Local
// servers); the terminator decides what may be *said* there, and looks for
// brokered credentials in what goes anywhere else.
//
// Everything here is called on the proxy's io thread, except
// outbound_credential() and body_check(), which are thread-safe.
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace px::proxy {

// How a terminated connection ended, for the proxy's own log line of it.
struct RelayEnd {
  std::string_view closed;       // eof, error, idle-timeout, cut, stopped, refused
  std::string_view reason;       // allowed, or why the connection was refused before its first request
  std::uint64_t bytes_up = 0;    // plaintext bytes from the client (heads and bodies)
  std::uint64_t bytes_down = 0;  // plaintext bytes to the client
  std::uint64_t requests = 0;
};

// Looks through a body that goes out in pieces (a plain-HTTP request to a
// host that is not terminated) for a credential that may not go there.
class OutboundBodyCheck {
 public:
  virtual ~OutboundBodyCheck() = default;
  // The credential's name when `data` (with the pieces before it) carries
  // its placeholder or secret; recorded by the terminator as an attempt.
  virtual std::optional<std::string> feed(std::string_view data) = 0;
};

// How the terminator takes a connection to a host and port.
enum class Termination {
  none,   // an end-to-end tunnel: never read
  tls,    // its TLS is terminated (a host with a credential or rules: every port)
  plain,  // plain HTTP read request by request (a model server on this machine, on its port)
};

class Terminator {
 public:
  virtual ~Terminator() = default;
  virtual Termination termination(std::string_view host, std::uint16_t port) const = 0;
  // Takes over an allowed connection to a terminated host: `client` after the
  // proxy's 200 (or a captured connection, or a plain-HTTP request through the
  // proxy to a server of Termination::plain), `early` the client's bytes the
  // proxy already read (for that request: its whole head, as sent), `upstream`
  // connected to the address the proxy checked. `on_end` is called once, on
  // the io thread.
  virtual void relay(boost::asio::ip::tcp::socket client, std::string early,
                     boost::asio::ip::tcp::socket upstream, const std::string& host, std::uint16_t port,
                     std::function<void(const RelayEnd&)> on_end) = 0;
  // Closes every terminated connection ("cut", "stopped"), each calling its on_end.
  virtual void abort_all(std::string_view how) = 0;
  // A text going to `host` outside a terminated connection (a destination
  // name, a plain-HTTP head): the name of a credential whose placeholder or
  // secret it carries and that may not go to `host`. Recorded when found.
  virtual std::optional<std::string> outbound_credential(std::string_view host, std::string_view text,
                                                         std::string_view where) = 0;
  // For the body of a plain-HTTP request to `host`; null when no credential
  // could be refused there.
  virtual std::unique_ptr<OutboundBodyCheck> body_check(std::string_view host) = 0;
};

}  // namespace px::proxy
