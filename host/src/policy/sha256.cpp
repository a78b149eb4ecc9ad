#include "policy/sha256.hpp"

// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but
// EVP's first use sets up the provider machinery: about a millisecond, which
// every `parallex run` paid for one digest of its policy.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <array>

namespace px::policy {

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> md{};
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(md.data(), &ctx);
  std::string hex;
  hex.reserve(md.size() * 2);
  static const char* digits = "0123456789abcdef";
  for (unsigned char b : md) {
    hex.push_back(digits[b >> 4]);
    hex.push_back(digits[b & 0xf]);
  }
  return hex;
}

}  // namespace px::policy
