// The run's credential broker (terminator.hpp, host/src/broker/), where the
// proxy meets it: its refusals, part of the decision, and the hand-off of a
// connection to a host whose TLS it terminates, after the connect.
//
// The broker holds the real secrets; the run holds placeholders. So before
// anything leaves the run for a host (the name, looked up and sent as the TLS
// server name; a plain-HTTP head; a captured connection's first bytes) the
// broker is asked whether it carries a credential that may not go there. The
// hand-off gives the broker both sockets, the upstream already connected to
// the address the proxy checked: the broker decides what may be said, never
// where.
#include <utility>

#include "proxy/connection.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {

bool Connection::refused_by_broker() {
  Terminator* broker = server_.config.terminator.get();
  if (broker == nullptr) return false;
  const std::string& host = dest_.endpoint.host;
  const std::string destination = host + ":" + std::to_string(dest_.endpoint.port);
  bool found = broker->outbound_credential(host, destination, "destination name").has_value();
  if (!found && dest_.named == Destination::Named::http_request)
    found = broker
                ->outbound_credential(host, std::string_view(dest_.first_bytes).substr(0, request_.head_size),
                                      "plain-HTTP request head")
                .has_value();
  if (!found && dest_.named == Destination::Named::captured && !dest_.first_bytes.empty())
    found = broker->outbound_credential(host, dest_.first_bytes, "first bytes of a captured connection")
                .has_value();
  if (found) {
    refuse(403, reason::credential_exfiltration, "denied", true);
    return true;
  }
  // The broker's rules apply inside TLS it terminates; plain HTTP to such a
  // host would pass them by.
  const bool plain_http =
      dest_.named == Destination::Named::http_request || decision_.inspected == "http-host";
  if (plain_http && broker->termination(host, dest_.endpoint.port) == Termination::tls) {
    refuse(403, reason::plain_http_to_terminated, "denied", true);
    return true;
  }
  return false;
}

void Connection::terminate(std::string early) {
  state_ = State::terminated;
  decision_.inspected = "terminated";
  dest_.first_bytes = std::string();
  outgoing_ = std::string();
  server_.config.terminator->relay(
      std::move(client_), std::move(early), std::move(upstream_), dest_.endpoint.host, dest_.endpoint.port,
      [self = shared_from_this()](const RelayEnd& end) { self->on_terminated(end); });
}

void Connection::on_terminated(const RelayEnd& end) {
  if (state_ == State::closed) return;
  // The plaintext the run and the server exchanged; a connection the broker
  // refused before its first request keeps the broker's reason.
  decision_.bytes_up = end.bytes_up;
  decision_.bytes_down = end.bytes_down;
  if (end.reason != reason::allowed) {
    decision_.verdict = end.reason.starts_with("upstream-") ? "failed" : "denied";
    decision_.reason = end.reason;
  }
  close(end.closed);
}

}  // namespace px::proxy
