#pragma once
#include <array>
#include <string>
#include <string_view>

namespace px {
// SHA-256 (FIPS 180-4), computed here rather than by OpenSSL: every run
// digests its policy and its walk cache, and the proxy checks its password
// with it, and loading libcrypto for that cost more than the digests
// themselves (common/openssl.hpp).
std::array<unsigned char, 32> sha256(std::string_view data);
// Lowercase hex of sha256(data).
std::string sha256_hex(std::string_view data);
}  // namespace px
