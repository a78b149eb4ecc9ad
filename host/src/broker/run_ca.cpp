#include "broker/run_ca.hpp"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "common/host_rule.hpp"
#include "proxy/host_rules.hpp"

namespace px::broker {
namespace {

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

Error ca_error(const std::string& what) {
  return Error::internal("the run's CA: " + what + ": " + openssl_error());
}

// A positive 128-bit serial from the random generator (RFC 5280: at most 20 octets).
bool set_random_serial(X509* x) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return false;
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;
  BIGNUM* bn = BN_bin2bn(bytes, sizeof bytes, nullptr);
  if (bn == nullptr) return false;
  ASN1_INTEGER* serial = BN_to_ASN1_INTEGER(bn, nullptr);
  BN_free(bn);
  if (serial == nullptr) return false;
  const int r = X509_set_serialNumber(x, serial);
  ASN1_INTEGER_free(serial);
  return r == 1;
}

bool add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const int r = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return r == 1;
}

bool set_name(X509_NAME* name, const std::string& org, const std::string& cn) {
  return X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0) == 1 &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) == 1;
}

bool set_validity(X509* x, std::chrono::system_clock::time_point from,
                  std::chrono::system_clock::time_point to) {
  const auto secs = [](std::chrono::system_clock::time_point t) {
    return static_cast<time_t>(
        std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  };
  return ASN1_TIME_set(X509_getm_notBefore(x), secs(from)) != nullptr &&
         ASN1_TIME_set(X509_getm_notAfter(x), secs(to)) != nullptr;
}

}  // namespace

void X509Free::operator()(X509* x) const {
  X509_free(x);
}
void PkeyFree::operator()(EVP_PKEY* k) const {
  EVP_PKEY_free(k);
}

Result<PkeyPtr> make_ec_key() {
  // P-256: every TLS stack accepts it (OpenSSL, BoringSSL, GnuTLS, Go,
  // rustls, Java, browsers). Ed25519 works with the CLI clients tested here
  // but not with browsers or older Java; see docs/broker.md.
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nullptr);
  EVP_PKEY* key = nullptr;
  const bool made = ctx != nullptr && EVP_PKEY_keygen_init(ctx) == 1 &&
                    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) == 1 &&
                    EVP_PKEY_keygen(ctx, &key) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!made) return ca_error("generate an EC P-256 key");
  return PkeyPtr(key);
}

std::string to_pem(X509* certificate) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return {};
  std::string out;
  if (PEM_write_bio_X509(bio, certificate) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) out.assign(data, static_cast<std::size_t>(n));
  }
  BIO_free(bio);
  return out;
}

Result<std::unique_ptr<RunCa>> RunCa::create(std::vector<std::string> hosts, std::chrono::seconds validity) {
  if (hosts.empty()) return Error::internal("the run's CA needs at least one terminated host");
  // The names go into the nameConstraints extension's configuration string:
  // only checked DNS names (letters, digits, '-', '.') may, so no ',' or ';'
  // can add a constraint of its own.
  for (auto& h : hosts) {
    // A model server on this machine served over TLS (https://localhost:PORT):
    // one label, which the host-name checks refuse as a public suffix.
    if (h == "localhost") continue;
    auto n = parse_exact_host(h);
    if (!n) return Error::invalid("a terminated host: " + n.error().message);
    h = n.value();
  }
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());

  std::unique_ptr<RunCa> ca(new RunCa());
  ca->hosts_ = hosts;
  PX_TRY_ASSIGN(ca->ca_key_, make_ec_key());
  PX_TRY_ASSIGN(ca->leaf_key_, make_ec_key());

  X509Ptr cert(X509_new());
  if (!cert) return ca_error("allocate the certificate");
  // Valid from an hour ago: a client whose clock is a little behind must not
  // see a certificate from the future.
  const auto now = std::chrono::system_clock::now();
  ca->not_after_ = now + validity;
  unsigned char tag[4];
  if (RAND_bytes(tag, sizeof tag) != 1) return ca_error("draw the CA's name");
  char tag_hex[9];
  std::snprintf(tag_hex, sizeof tag_hex, "%02x%02x%02x%02x", tag[0], tag[1], tag[2], tag[3]);
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 || !set_random_serial(cert.get()) ||
      !set_validity(cert.get(), now - std::chrono::hours(1), ca->not_after_) ||
      !set_name(X509_get_subject_name(cert.get()), "Parallex", std::string("Parallex run CA ") + tag_hex) ||
      X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1 ||
      X509_set_pubkey(cert.get(), ca->ca_key_.get()) != 1) {
    return ca_error("fill in the CA certificate");
  }
  std::string constraints = "critical";
  for (const auto& h : hosts) constraints += ",permitted;DNS:" + h;
  // No IP address at all: the proxy never terminates a connection to an IP.
  constraints += ",excluded;IP:0.0.0.0/0.0.0.0,excluded;IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0";
  if (!add_ext(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_ext(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_ext(cert.get(), cert.get(), NID_subject_key_identifier, "hash") ||
      !add_ext(cert.get(), cert.get(), NID_name_constraints, constraints)) {
    return ca_error("add the CA's extensions");
  }
  if (X509_sign(cert.get(), ca->ca_key_.get(), EVP_sha256()) == 0) return ca_error("sign the CA certificate");
  ca->ca_pem_ = to_pem(cert.get());
  if (ca->ca_pem_.empty()) return ca_error("write the CA certificate as PEM");
  ca->ca_cert_ = std::move(cert);
  return ca;
}

RunCa::~RunCa() = default;

Result<std::shared_ptr<const Leaf>> RunCa::leaf_for(std::string_view host) {
  if (std::find(hosts_.begin(), hosts_.end(), host) == hosts_.end()) {
    return Error::internal("the run's CA was not made for " + std::string(host));
  }
  std::lock_guard lock(mutex_);
  if (auto it = leaves_.find(host); it != leaves_.end()) return it->second;
  PX_TRY_ASSIGN(auto leaf, mint(host));
  leaves_.emplace(std::string(host), leaf);
  return leaf;
}

Result<std::shared_ptr<const Leaf>> RunCa::mint_unchecked_for_test(std::string_view host) {
  return mint(host);
}

Result<std::shared_ptr<const Leaf>> RunCa::mint(std::string_view host) {
  X509Ptr cert(X509_new());
  if (!cert) return ca_error("allocate a leaf certificate");
  std::string name;
  // The name goes into a configuration string (subjectAltName): checked first.
  if (!proxy::check_host_name(host, name).ok() || name != host) {
    return Error::internal("the run's CA mints leaves for plain host names only, not " + std::string(host));
  }
  const auto now = std::chrono::system_clock::now();
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 || !set_random_serial(cert.get()) ||
      !set_validity(cert.get(), now - std::chrono::hours(1), not_after_) ||
      !set_name(X509_get_subject_name(cert.get()), "Parallex", name) ||
      X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert_.get())) != 1 ||
      X509_set_pubkey(cert.get(), leaf_key_.get()) != 1) {
    return ca_error("fill in the leaf for " + name);
  }
  if (!add_ext(cert.get(), ca_cert_.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(cert.get(), ca_cert_.get(), NID_key_usage, "critical,digitalSignature") ||
      !add_ext(cert.get(), ca_cert_.get(), NID_ext_key_usage, "serverAuth") ||
      !add_ext(cert.get(), ca_cert_.get(), NID_subject_key_identifier, "hash") ||
      !add_ext(cert.get(), ca_cert_.get(), NID_authority_key_identifier, "keyid:always") ||
      !add_ext(cert.get(), ca_cert_.get(), NID_subject_alt_name, "DNS:" + name)) {
    return ca_error("add the extensions of the leaf for " + name);
  }
  if (X509_sign(cert.get(), ca_key_.get(), EVP_sha256()) == 0) return ca_error("sign the leaf for " + name);
  auto leaf = std::make_shared<Leaf>();
  leaf->certificate = std::move(cert);
  leaf->key = leaf_key_.get();
  return std::shared_ptr<const Leaf>(std::move(leaf));
}

}  // namespace px::broker
