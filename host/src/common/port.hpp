#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace px {

// A TCP port as a person writes one: decimal digits only, 1 to 65535, and no
// leading zero (`0443` reads as 443 to one program and as octal to another, so
// no input of ours accepts it). Every flag, profile, agent file and rule that
// names a port reads it here, so they all accept and refuse the same text.
std::optional<std::uint16_t> parse_port(std::string_view text);

}  // namespace px
