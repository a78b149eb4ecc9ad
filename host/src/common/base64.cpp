#include "common/base64.hpp"

#include <array>
#include <cstdint>

namespace px {

namespace {

constexpr std::string_view kStandard = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of each character in `alphabet`, or -1.
constexpr std::array<std::int8_t, 256> values_of(std::string_view alphabet) {
  std::array<std::int8_t, 256> v{};
  for (auto& x : v) x = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    v[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return v;
}

constexpr auto kStandardValues = values_of(kStandard);
constexpr auto kUrlValues = values_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");

// Decodes `text` (its length a multiple of 4 once `padded`) with `values`:
// '=' only in the last two places of the last group, and nothing after it.
std::optional<std::string> decode(std::string_view text, const std::array<std::int8_t, 256>& values,
                                  bool padded) {
  if (padded && text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  if (padded) {
    if (text.ends_with("==")) {
      pad = 2;
    } else if (text.ends_with("=")) {
      pad = 1;
    }
  }
  const std::string_view body = text.substr(0, text.size() - pad);
  if (body.size() % 4 == 1) return std::nullopt;  // six bits cannot end a byte
  std::string out;
  out.reserve(body.size() / 4 * 3 + 2);
  std::uint32_t group = 0;
  int bits = 0;
  for (const char c : body) {
    const int v = values[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    group = (group << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((group >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t g = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out.push_back(kStandard[(g >> 18) & 63]);
    out.push_back(kStandard[(g >> 12) & 63]);
    out.push_back(kStandard[(g >> 6) & 63]);
    out.push_back(kStandard[g & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t g = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) g |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out.push_back(kStandard[(g >> 18) & 63]);
    out.push_back(kStandard[(g >> 12) & 63]);
    out.push_back(rest == 2 ? kStandard[(g >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  return decode(text, kStandardValues, /*padded=*/true);
}

std::optional<std::string> base64url_decode(std::string_view text) {
  while (text.ends_with('=')) text.remove_suffix(1);
  return decode(text, kUrlValues, /*padded=*/false);
}

}  // namespace px
