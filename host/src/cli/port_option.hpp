#pragma once
// The check for an option whose value is a port (`ui --port`, `proxy
// --allow-port`, `policy show --proxy-port`). CLI11 alone reads `0443` as octal
// (291) and `+80` as 80; this reads the text with common/port.hpp's
// parse_port first, so a port given on the command line is accepted and
// refused as in every profile, agent file and rule.
#include <CLI/CLI.hpp>

namespace px::cli {

CLI::Validator port_number();

}  // namespace px::cli
