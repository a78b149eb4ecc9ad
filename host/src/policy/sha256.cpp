#include "policy/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

namespace px::policy {

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(len * 2);
  static const char* digits = "0123456789abcdef";
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(digits[md[i] >> 4]);
    hex.push_back(digits[md[i] & 0xf]);
  }
  return hex;
}

}  // namespace px::policy
