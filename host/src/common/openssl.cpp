#include "common/openssl.hpp"

#include "common/lazy_library.hpp"

namespace px::openssl {

namespace {

struct Api {
#define PX_OPENSSL_MEMBER(ret, name, params, args) decltype(&::name) name = nullptr;
  PX_LIBCRYPTO_FUNCTIONS(PX_OPENSSL_MEMBER)
  PX_LIBSSL_FUNCTIONS(PX_OPENSSL_MEMBER)
#undef PX_OPENSSL_MEMBER
};

Api load() {
  // libssl brings libcrypto as its own dependency, so one handle finds both.
  // The forwarders below are hidden, so neither library's calls into the
  // other can land back on them.
  const LazyLibrary lib(
      {PX_LIBSSL_SONAME, "OpenSSL", "TLS, signing keys and snapshots need it", PX_LIBSSL_PACKAGE});
  Api api;
#define PX_OPENSSL_LOOKUP(ret, name, params, args) \
  api.name = reinterpret_cast<decltype(api.name)>(lib.symbol(#name));
  PX_LIBCRYPTO_FUNCTIONS(PX_OPENSSL_LOOKUP)
  PX_LIBSSL_FUNCTIONS(PX_OPENSSL_LOOKUP)
#undef PX_OPENSSL_LOOKUP
  return api;
}

// Loads both libraries once, on the first call from any thread. No process
// forked by a run's seal calls OpenSSL, so no child can take the loader's
// lock half-held by a parent's thread.
const Api& api() {
  static const Api loaded = load();
  return loaded;
}

}  // namespace

}  // namespace px::openssl

// OpenSSL's own names, hidden: they serve this executable's calls only and
// never enter its dynamic symbol table, where they would interpose on
// libssl's calls into libcrypto.
extern "C" {
#define PX_OPENSSL_FORWARD(ret, name, params, args) \
  [[gnu::visibility("hidden")]] ret name params {   \
    return px::openssl::api().name args;            \
  }
PX_LIBCRYPTO_FUNCTIONS(PX_OPENSSL_FORWARD)
PX_LIBSSL_FUNCTIONS(PX_OPENSSL_FORWARD)
#undef PX_OPENSSL_FORWARD
}
