#include "broker/tls_contexts.hpp"
#include "broker/upstream_trust.hpp"

namespace px::broker {

Status configure_upstream_trust(SSL_CTX* context) {
  return load_system_store(context);
}

}  // namespace px::broker
