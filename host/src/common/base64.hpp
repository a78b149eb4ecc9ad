#pragma once
// Base64 (RFC 4648) by OpenSSL (EVP_EncodeBlock, EVP_DecodeBlock), with the
// strictness OpenSSL's decoder lacks (it skips surrounding whitespace and
// takes '=' anywhere): the proxy's Basic credentials, the broker's
// placeholders in their encoded forms, SSH key lines, JSON Web Tokens.
#include <optional>
#include <string>
#include <string_view>

namespace px {

// Standard alphabet, padded with '='.
std::string base64_encode(std::string_view bytes);

// Strict: a multiple of four characters of the standard alphabet, '=' only as
// the last one or two. nullopt for anything else.
std::optional<std::string> base64_decode(std::string_view text);

// The URL-safe alphabet ('-' and '_'), padding optional (a JSON Web Token's
// parts have none). nullopt for anything else.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace px
