// The broker tests' upstream trust: the system store, as in the shipped
// library, plus the CA of the tests' loopback servers. This file replaces
// upstream_trust_system.cpp at link time in the test executable only (see
// host/src/broker/upstream_trust.hpp); nothing in the parallex executable can
// reach it.
#include "test_upstream_trust.hpp"

#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <mutex>
#include <string>

#include "broker/tls_contexts.hpp"
#include "broker/upstream_trust.hpp"

namespace px::broker {
namespace {
std::mutex mutex;
std::string& test_ca() {
  static std::string pem;
  return pem;
}
}  // namespace

namespace test {
void set_test_upstream_ca(const std::string& pem) {
  std::lock_guard lock(mutex);
  test_ca() = pem;
}
}  // namespace test

Status configure_upstream_trust(SSL_CTX* context) {
  PX_TRY(load_system_store(context));
  std::lock_guard lock(mutex);
  if (test_ca().empty()) return ok();
  BIO* bio = BIO_new_mem_buf(test_ca().data(), static_cast<int>(test_ca().size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (ca == nullptr) return Error::internal("the test upstream CA is not PEM");
  const int r = X509_STORE_add_cert(SSL_CTX_get_cert_store(context), ca);
  X509_free(ca);
  if (r != 1) return Error::internal("the test upstream CA could not be added");
  return ok();
}

}  // namespace px::broker
