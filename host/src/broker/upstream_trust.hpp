#pragma once
// Which certificate authorities the broker trusts for upstream servers.
//
// The shipped library (px_broker) links upstream_trust_system.cpp: the host's
// system store, from OpenSSL's compiled-in paths (not SSL_CERT_FILE or any
// other variable of the supervisor's environment). The broker's tests link a
// definition of their own instead (tests/broker/test_upstream_trust.cpp) that
// also trusts the test CA of their loopback servers. There is no switch and
// no variable: the test hook is which object file is linked, so it does not
// exist in the parallex executable. px_broker_core alone leaves this
// undefined, and a program that links it without either fails to link.
#include <openssl/types.h>

#include "common/error.hpp"

namespace px::broker {

Status configure_upstream_trust(SSL_CTX* context);

}  // namespace px::broker
