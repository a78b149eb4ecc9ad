#pragma once
// libssl and libcrypto, loaded on first use. A command that neither
// verifies TLS nor signs nor hashes a snapshot does not load them: mapping
// and relocating them (19,000 relocations, 150 pages touched) was half of
// `parallex --version` and a tenth of `parallex run -- /bin/true`.
//
// Code calls OpenSSL as usual: common/openssl.cpp defines every function
// below under OpenSSL's own name, with OpenSSL's own signature (checked by the
// compiler against OpenSSL's headers), and forwards to the library, which the
// first call loads. That keeps OpenSSL's macros (SSL_CTX_set_mode is
// SSL_CTX_ctrl) and Boost.Asio's `::SSL_read` working unchanged. The
// executable no longer links OpenSSL, so a function missing here fails the
// link, naming it: add it to the list (its signature from the header).
//
// X(return type, name, (parameters), (arguments))
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// clang-format off
// Functions of libcrypto.
#define PX_LIBCRYPTO_FUNCTIONS(X) \
  X(void, ASN1_INTEGER_free, (ASN1_INTEGER* a0), (a0))                                                    \
  X(ASN1_TIME*, ASN1_TIME_set, (ASN1_TIME* a0, time_t a1), (a0, a1))                                      \
  X(long, BIO_ctrl, (BIO* a0, int a1, long a2, void* a3), (a0, a1, a2, a3))                               \
  X(size_t, BIO_ctrl_pending, (BIO* a0), (a0))                                                            \
  X(int, BIO_free, (BIO* a0), (a0))                                                                       \
  X(BIO*, BIO_new, (const BIO_METHOD* a0), (a0))                                                          \
  X(int, BIO_new_bio_pair, (BIO** a0, size_t a1, BIO** a2, size_t a3), (a0, a1, a2, a3))                  \
  X(int, BIO_read, (BIO* a0, void* a1, int a2), (a0, a1, a2))                                             \
  X(const BIO_METHOD*, BIO_s_mem, (void), ())                                                             \
  X(int, BIO_write, (BIO* a0, const void* a1, int a2), (a0, a1, a2))                                      \
  X(BIGNUM*, BN_bin2bn, (const unsigned char* a0, int a1, BIGNUM* a2), (a0, a1, a2))                      \
  X(void, BN_free, (BIGNUM* a0), (a0))                                                                    \
  X(ASN1_INTEGER*, BN_to_ASN1_INTEGER, (const BIGNUM* a0, ASN1_INTEGER* a1), (a0, a1))                    \
  X(int, CRYPTO_get_ex_new_index,                                                                         \
      (int a0, long a1, void* a2, CRYPTO_EX_new* a3, CRYPTO_EX_dup* a4, CRYPTO_EX_free* a5),              \
      (a0, a1, a2, a3, a4, a5))                                                                           \
  X(void, ERR_clear_error, (void), ())                                                                    \
  X(void, ERR_error_string_n, (unsigned long a0, char* a1, size_t a2), (a0, a1, a2))                      \
  X(unsigned long, ERR_get_error, (void), ())                                                             \
  X(const char*, ERR_reason_error_string, (unsigned long a0), (a0))                                       \
  X(int, EVP_DigestFinal_ex, (EVP_MD_CTX* a0, unsigned char* a1, unsigned int* a2), (a0, a1, a2))         \
  X(int, EVP_DigestInit_ex, (EVP_MD_CTX* a0, const EVP_MD* a1, ENGINE* a2), (a0, a1, a2))                 \
  X(int, EVP_DigestUpdate, (EVP_MD_CTX* a0, const void* a1, size_t a2), (a0, a1, a2))                     \
  X(void, EVP_MD_CTX_free, (EVP_MD_CTX* a0), (a0))                                                        \
  X(EVP_MD_CTX*, EVP_MD_CTX_new, (void), ())                                                              \
  X(void, EVP_PKEY_CTX_free, (EVP_PKEY_CTX* a0), (a0))                                                    \
  X(int, EVP_PKEY_CTX_set_ec_paramgen_curve_nid, (EVP_PKEY_CTX* a0, int a1), (a0, a1))                    \
  X(EVP_PKEY_CTX*, EVP_PKEY_CTX_new_id, (int a0, ENGINE* a1), (a0, a1))                                   \
  X(void, EVP_PKEY_free, (EVP_PKEY* a0), (a0))                                                            \
  X(int, EVP_PKEY_get_raw_private_key, (const EVP_PKEY* a0, unsigned char* a1, size_t* a2), (a0, a1, a2)) \
  X(int, EVP_PKEY_get_raw_public_key, (const EVP_PKEY* a0, unsigned char* a1, size_t* a2), (a0, a1, a2))  \
  X(int, EVP_PKEY_keygen, (EVP_PKEY_CTX* a0, EVP_PKEY** a1), (a0, a1))                                    \
  X(int, EVP_PKEY_keygen_init, (EVP_PKEY_CTX* a0), (a0))                                                  \
  X(const EVP_MD*, EVP_sha1, (void), ())                                                                  \
  X(const EVP_MD*, EVP_sha256, (void), ())                                                                \
  X(X509*, PEM_read_bio_X509, (BIO* a0, X509** a1, pem_password_cb* a2, void* a3), (a0, a1, a2, a3))      \
  X(int, PEM_write_bio_X509, (BIO* a0, const X509* a1), (a0, a1))                                         \
  X(int, RAND_bytes, (unsigned char* a0, int a1), (a0, a1))                                               \
  X(X509_EXTENSION*, X509V3_EXT_conf_nid,                                                                 \
      (struct lhash_st_CONF_VALUE* a0, X509V3_CTX* a1, int a2, const char* a3), (a0, a1, a2, a3))         \
  X(void, X509V3_set_ctx, (X509V3_CTX* a0, X509* a1, X509* a2, X509_REQ* a3, X509_CRL* a4, int a5),       \
      (a0, a1, a2, a3, a4, a5))                                                                           \
  X(void, X509_EXTENSION_free, (X509_EXTENSION* a0), (a0))                                                \
  X(int, X509_NAME_add_entry_by_txt,                                                                      \
      (X509_NAME* a0, const char* a1, int a2, const unsigned char* a3, int a4, int a5, int a6),           \
      (a0, a1, a2, a3, a4, a5, a6))                                                                       \
  X(int, X509_add_ext, (X509* a0, X509_EXTENSION* a1, int a2), (a0, a1, a2))                              \
  X(void, X509_free, (X509* a0), (a0))                                                                    \
  X(const char*, X509_get_default_cert_dir, (void), ())                                                   \
  X(const char*, X509_get_default_cert_file, (void), ())                                                  \
  X(X509_NAME*, X509_get_subject_name, (const X509* a0), (a0))                                            \
  X(ASN1_TIME*, X509_getm_notAfter, (const X509* a0), (a0))                                               \
  X(ASN1_TIME*, X509_getm_notBefore, (const X509* a0), (a0))                                              \
  X(X509*, X509_new, (void), ())                                                                          \
  X(int, X509_set_issuer_name, (X509* a0, const X509_NAME* a1), (a0, a1))                                 \
  X(int, X509_set_pubkey, (X509* a0, EVP_PKEY* a1), (a0, a1))                                             \
  X(int, X509_set_serialNumber, (X509* a0, ASN1_INTEGER* a1), (a0, a1))                                   \
  X(int, X509_set_version, (X509* a0, long a1), (a0, a1))                                                 \
  X(int, X509_sign, (X509* a0, EVP_PKEY* a1, const EVP_MD* a2), (a0, a1, a2))                             \
  X(const char*, X509_verify_cert_error_string, (long a0), (a0))

// Functions of libssl.
#define PX_LIBSSL_FUNCTIONS(X) \
  X(long, SSL_CTX_callback_ctrl, (SSL_CTX* a0, int a1, void (*a2)(void)), (a0, a1, a2))          \
  X(long, SSL_CTX_ctrl, (SSL_CTX* a0, int a1, long a2, void* a3), (a0, a1, a2, a3))              \
  X(void, SSL_CTX_free, (SSL_CTX* a0), (a0))                                                     \
  X(void*, SSL_CTX_get_default_passwd_cb_userdata, (SSL_CTX* a0), (a0))                          \
  X(void*, SSL_CTX_get_ex_data, (const SSL_CTX* a0, int a1), (a0, a1))                           \
  X(int, SSL_CTX_load_verify_dir, (SSL_CTX* a0, const char* a1), (a0, a1))                       \
  X(int, SSL_CTX_load_verify_file, (SSL_CTX* a0, const char* a1), (a0, a1))                      \
  X(SSL_CTX*, SSL_CTX_new, (const SSL_METHOD* a0), (a0))                                         \
  X(void, SSL_CTX_set_alpn_select_cb, (SSL_CTX* a0, SSL_CTX_alpn_select_cb_func a1, void* a2),   \
      (a0, a1, a2))                                                                              \
  X(void, SSL_CTX_set_default_passwd_cb_userdata, (SSL_CTX* a0, void* a1), (a0, a1))             \
  X(int, SSL_CTX_set_ex_data, (SSL_CTX* a0, int a1, void* a2), (a0, a1, a2))                     \
  X(int, SSL_CTX_set_num_tickets, (SSL_CTX* a0, size_t a1), (a0, a1))                            \
  X(uint64_t, SSL_CTX_set_options, (SSL_CTX* a0, uint64_t a1), (a0, a1))                         \
  X(void, SSL_CTX_set_verify, (SSL_CTX* a0, int a1, SSL_verify_cb a2), (a0, a1, a2))             \
  X(int, SSL_accept, (SSL* a0), (a0))                                                            \
  X(int, SSL_connect, (SSL* a0), (a0))                                                           \
  X(long, SSL_ctrl, (SSL* a0, int a1, long a2, void* a3), (a0, a1, a2, a3))                      \
  X(void, SSL_free, (SSL* a0), (a0))                                                             \
  X(int, SSL_get_error, (const SSL* a0, int a1), (a0, a1))                                       \
  X(void*, SSL_get_ex_data, (const SSL* a0, int a1), (a0, a1))                                   \
  X(const char*, SSL_get_servername, (const SSL* a0, const int a1), (a0, a1))                    \
  X(int, SSL_get_shutdown, (const SSL* a0), (a0))                                                \
  X(long, SSL_get_verify_result, (const SSL* a0), (a0))                                          \
  X(SSL*, SSL_new, (SSL_CTX* a0), (a0))                                                          \
  X(int, SSL_read, (SSL* a0, void* a1, int a2), (a0, a1, a2))                                    \
  X(int, SSL_set1_host, (SSL* a0, const char* a1), (a0, a1))                                     \
  X(int, SSL_set_alpn_protos, (SSL* a0, const unsigned char* a1, unsigned int a2), (a0, a1, a2)) \
  X(void, SSL_set_bio, (SSL* a0, BIO* a1, BIO* a2), (a0, a1, a2))                                \
  X(int, SSL_set_ex_data, (SSL* a0, int a1, void* a2), (a0, a1, a2))                             \
  X(void, SSL_set_hostflags, (SSL* a0, unsigned int a1), (a0, a1))                               \
  X(int, SSL_shutdown, (SSL* a0), (a0))                                                          \
  X(int, SSL_use_PrivateKey, (SSL* a0, EVP_PKEY* a1), (a0, a1))                                  \
  X(int, SSL_use_certificate, (SSL* a0, X509* a1), (a0, a1))                                     \
  X(int, SSL_write, (SSL* a0, const void* a1, int a2), (a0, a1, a2))                             \
  X(const SSL_METHOD*, TLS_client_method, (void), ())                                            \
  X(const SSL_METHOD*, TLS_server_method, (void), ())
// clang-format on
