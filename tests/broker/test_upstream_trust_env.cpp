// The upstream trust of parallex-test-trust, the parallex executable the
// broker's end-to-end tests run (tests/broker/run_test.cpp): the system store,
// as in the shipped executable, plus the CA in the file that
// PARALLEX_TEST_UPSTREAM_CA names (the tests' loopback servers). This file
// replaces upstream_trust_system.cpp at link time in that executable only
// (see host/src/broker/upstream_trust.hpp); the parallex executable does not
// contain it, so no variable can widen a real run's trust.
#include <openssl/ssl.h>

#include <cstdlib>
#include <string>

#include "broker/tls_contexts.hpp"
#include "broker/upstream_trust.hpp"

namespace px::broker {

Status configure_upstream_trust(SSL_CTX* context) {
  PX_TRY(load_system_store(context));
  const char* file = std::getenv("PARALLEX_TEST_UPSTREAM_CA");
  if (file == nullptr || *file == '\0') return ok();
  if (SSL_CTX_load_verify_file(context, file) != 1)
    return Error::internal(std::string("the test upstream CA ") + file + " cannot be read");
  return ok();
}

}  // namespace px::broker
