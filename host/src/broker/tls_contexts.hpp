#pragma once
// The two TLS contexts of a run's broker: one facing the run's clients (the
// run's leaves, ALPN http/1.1 only, the server name checked), one facing the
// upstream servers (verified against the system store and the name, always).
#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "broker/run_ca.hpp"
#include "common/error.hpp"

namespace px::broker {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

// What the server-name callback found; owned by the connection, reached from
// the SSL object during its handshake.
struct SniCheck {
  std::string expected;  // the host the proxy allowed
  std::string seen;      // what the client asked for ("" if it sent no name)
  bool mismatch = false;
};

Result<SslCtxPtr> make_client_facing_context();
Result<SslCtxPtr> make_upstream_context();

// Per connection: the leaf for the host and the name check.
Status prepare_client_facing(SSL* ssl, const Leaf& leaf, SniCheck* check);
// Per connection: SNI, the name the certificate must carry, ALPN http/1.1.
Status prepare_upstream(SSL* ssl, const std::string& host);

// Loads the host's system store into `context`, from OpenSSL's compiled-in
// paths (never SSL_CERT_FILE or another variable of the environment).
Status load_system_store(SSL_CTX* context);

// Why the upstream's certificate was refused ("certificate has expired",
// "hostname mismatch", "unable to get local issuer certificate").
std::string upstream_verify_error(SSL* ssl);

}  // namespace px::broker
