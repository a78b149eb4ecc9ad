#include "common/base64.hpp"

#include <openssl/evp.h>

#include <climits>
#include <stdexcept>

namespace px {

namespace {

bool in_standard_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

const unsigned char* bytes_of(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  if (bytes.size() > INT_MAX / 4 * 3 - 3) throw std::length_error("base64_encode: input too long");
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');  // EVP_EncodeBlock ends it with a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(bytes),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > INT_MAX) return std::nullopt;
  std::size_t pad = 0;
  if (text.ends_with("==")) {
    pad = 2;
  } else if (text.ends_with('=')) {
    pad = 1;
  }
  for (std::size_t i = 0; i < text.size() - pad; ++i)
    if (!in_standard_alphabet(text[i])) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes_of(text),
                                static_cast<int>(text.size()));
  // OpenSSL counts the padding as zero bytes.
  if (n < 0 || static_cast<std::size_t>(n) != out.size()) return std::nullopt;
  out.resize(out.size() - pad);
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  while (text.ends_with('=')) text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;  // six bits cannot end a byte
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (c == '+' || c == '/') {
      return std::nullopt;
    }
  }
  standard.append((4 - standard.size() % 4) % 4, '=');
  return base64_decode(standard);
}

}  // namespace px
