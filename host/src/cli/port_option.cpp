#include "cli/port_option.hpp"

#include <string>

#include "common/port.hpp"

namespace px::cli {

CLI::Validator port_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (parse_port(text)) return {};
        return "'" + text + "' is not a port: give 1 to 65535, in decimal without a leading zero";
      },
      "PORT");
}

}  // namespace px::cli
