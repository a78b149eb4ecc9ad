#include "common/port.hpp"

#include <charconv>

namespace px {

std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.front() == '0') return std::nullopt;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // from_chars takes a leading '-' for signed types only; a '+' never.
  if (ec != std::errc() || end != text.data() + text.size() || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

}  // namespace px
