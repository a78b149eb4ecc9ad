#pragma once
// The one spelling of Local servers, for the run commands, `agent new/set`,
// profiles and agent.yaml: on for every port of this machine's loopback (the
// bare `--local-servers`, `local_servers: true`), on for named ports only
// (`--local-servers=3000,5432`, `local_servers: [3000, 5432]`), or off
// (`--local-servers=off`). Off unless the user turns it on, agents included.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace px::policy {

struct LocalServers {
  bool on = false;
  std::vector<std::uint16_t> ports;  // with `on`: only these, sorted; empty: every port
  // "off", "every port", "ports 3000,5432"
  std::string describe() const;
  // The value as written after `--local-servers=` ("", "off", "3000,5432").
  std::string flag_value() const;
};

// `text`: what followed `--local-servers=` ("" or "every" for every port,
// "off", a comma-separated list of ports; the old "on" still reads as every
// port). `where` names the input in errors ("--local-servers", "agent.yaml").
Result<LocalServers> parse_local_servers(std::string_view text, const std::string& where);

}  // namespace px::policy
