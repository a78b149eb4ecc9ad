#pragma once
#include <string>
#include <string_view>

namespace px::policy {
// Lowercase hex SHA-256 (FIPS 180-4), computed here rather than by OpenSSL:
// every run digests its policy and its walk cache, and loading libcrypto for
// that cost more than the digest itself (common/openssl.hpp).
std::string sha256_hex(std::string_view data);
}  // namespace px::policy
