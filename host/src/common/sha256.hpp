#pragma once
// SHA-256 of a string, by OpenSSL (EVP_Digest): the policy's digest, the walk
// cache's names and checks, key fingerprints, the proxy's password check.
#include <array>
#include <string>
#include <string_view>

namespace px {
std::array<unsigned char, 32> sha256(std::string_view data);
// Lowercase hex of sha256(data).
std::string sha256_hex(std::string_view data);
}  // namespace px
