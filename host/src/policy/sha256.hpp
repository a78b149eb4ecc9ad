#pragma once
#include <string>
#include <string_view>

namespace px::policy {
// Lowercase hex SHA-256 (OpenSSL EVP).
std::string sha256_hex(std::string_view data);
}  // namespace px::policy
