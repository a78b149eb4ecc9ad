#pragma once
// The server name (SNI) a TLS client asks for in its ClientHello, read from
// the first bytes of a CONNECT tunnel, so that a tunnel opened to an allowed
// host cannot carry a TLS session to another one behind the same front end
// (domain fronting). A pure function: fuzzed (fuzz/proxy_request_parser.cpp).
#include <string>
#include <string_view>

namespace px::proxy {

struct ClientHelloSni {
  enum class Status {
    need_more,  // a TLS handshake has begun; more bytes are needed
    not_tls,    // the tunnel does not start with a TLS handshake: nothing to check
    no_sni,     // a ClientHello without a server name
    found,      // `host` holds the server name
    malformed,  // starts like TLS but is not a valid ClientHello
  };
  Status status = Status::need_more;
  std::string host;
};

// Reads the ClientHello at the start of `bytes` (it may span TLS records).
ClientHelloSni read_client_hello_sni(std::string_view bytes);

// Whether the SNI names the CONNECT host: case-insensitive, one trailing dot ignored.
bool sni_matches(std::string_view sni, std::string_view connect_host);

}  // namespace px::proxy
