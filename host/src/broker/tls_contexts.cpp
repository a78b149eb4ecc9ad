#include "broker/tls_contexts.hpp"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "broker/upstream_trust.hpp"

namespace px::broker {
namespace {

int sni_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string normalized_name(const char* name) {
  std::string n = name == nullptr ? std::string() : std::string(name);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? char(c + 32) : c; });
  if (!n.empty() && n.back() == '.') n.pop_back();
  return n;
}

// A ClientHello that asks for another name than the one the proxy allowed is
// refused before any certificate is shown: a tunnel to an allowed host must
// not carry a session for another one (and the leaf would not fit it anyway).
int on_server_name(SSL* ssl, int* alert, void*) {
  auto* check = static_cast<SniCheck*>(SSL_get_ex_data(ssl, sni_index()));
  if (check == nullptr) return SSL_TLSEXT_ERR_ALERT_FATAL;
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  check->seen = normalized_name(name);
  if (name != nullptr && check->seen != check->expected) {
    check->mismatch = true;
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  return SSL_TLSEXT_ERR_OK;
}

// HTTP/1.1 only: the relay reads every request, and it speaks HTTP/1.1. A
// client that offers h2 and http/1.1 gets http/1.1; one that offers no
// http/1.1 gets no ALPN answer and fails on its own terms.
int on_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
            unsigned int inlen, void*) {
  static constexpr unsigned char kHttp11[] = {'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned int i = 0;
  while (i < inlen) {
    const unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (len == sizeof kHttp11 && std::equal(in + i + 1, in + i + 1 + len, kHttp11)) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

Error tls_error(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  char buf[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  return Error::internal("the broker's TLS: " + what + ": " + buf);
}

}  // namespace

Result<SslCtxPtr> make_client_facing_context() {
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return tls_error("create the client-facing context");
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  // No resumption: every connection goes through the server-name check and
  // gets the leaf of its own host.
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(ctx.get(),
                      SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  // The macros SSL_CTX_set_tlsext_servername_callback and SSL_set_tlsext_host_name
  // expand to C casts (-Werror=old-style-cast); their expansions, spelled out.
  SSL_CTX_callback_ctrl(ctx.get(), SSL_CTRL_SET_TLSEXT_SERVERNAME_CB,
                        reinterpret_cast<void (*)()>(on_server_name));
  SSL_CTX_set_alpn_select_cb(ctx.get(), on_alpn, nullptr);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
  return ctx;
}

Result<SslCtxPtr> make_upstream_context() {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return tls_error("create the upstream context");
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
  PX_TRY(configure_upstream_trust(ctx.get()));
  return ctx;
}

Status prepare_client_facing(SSL* ssl, const Leaf& leaf, SniCheck* check) {
  if (SSL_use_certificate(ssl, leaf.certificate.get()) != 1 || SSL_use_PrivateKey(ssl, leaf.key) != 1) {
    return tls_error("load the leaf for " + check->expected);
  }
  SSL_set_ex_data(ssl, sni_index(), check);
  return ok();
}

Status prepare_upstream(SSL* ssl, const std::string& host) {
  static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(host.c_str())) != 1 ||
      SSL_set1_host(ssl, host.c_str()) != 1 || SSL_set_alpn_protos(ssl, kAlpn, sizeof kAlpn) != 0) {
    return tls_error("prepare the upstream connection to " + host);
  }
  return ok();
}

Status load_system_store(SSL_CTX* context) {
  // X509_get_default_cert_file() is OpenSSL's compiled-in bundle (on Debian
  // /usr/lib/ssl/cert.pem -> /etc/ssl/certs/ca-certificates.crt); unlike
  // SSL_CTX_set_default_verify_paths() it ignores SSL_CERT_FILE, so nothing in
  // the user's environment widens what upstream servers are trusted by.
  const bool file = SSL_CTX_load_verify_file(context, X509_get_default_cert_file()) == 1;
  const bool dir = SSL_CTX_load_verify_dir(context, X509_get_default_cert_dir()) == 1;
  ERR_clear_error();
  if (!file && !dir) {
    return Error::not_found(
        std::string("the system's CA store (") + X509_get_default_cert_file() + ", " +
        X509_get_default_cert_dir() +
        ") cannot be read; install ca-certificates: the broker verifies every upstream server.");
  }
  return ok();
}

std::string upstream_verify_error(SSL* ssl) {
  const long r = SSL_get_verify_result(ssl);
  if (r == X509_V_OK) return {};
  return X509_verify_cert_error_string(r);
}

}  // namespace px::broker
