#include "policy/local_servers.hpp"

#include <algorithm>

#include "common/port.hpp"

namespace px::policy {

std::string LocalServers::describe() const {
  if (!on) return "off";
  if (ports.empty()) return "every port";
  std::string out = ports.size() == 1 ? "port " : "ports ";
  for (std::size_t i = 0; i < ports.size(); ++i) out += (i ? "," : "") + std::to_string(ports[i]);
  return out;
}

std::string LocalServers::flag_value() const {
  if (!on) return "off";
  std::string out;
  for (std::size_t i = 0; i < ports.size(); ++i) out += (i ? "," : "") + std::to_string(ports[i]);
  return out;
}

Result<LocalServers> parse_local_servers(std::string_view text, const std::string& where) {
  LocalServers out;
  if (text.empty() || text == "every" || text == "on" || text == "true") {
    out.on = true;
    return out;
  }
  if (text == "off" || text == "false") return out;
  const auto bad = [&](std::string_view item) {
    return Error::invalid(where + ": '" + std::string(item.substr(0, 40)) +
                          "' is not a port between 1 and 65535; write --local-servers (every port), "
                          "--local-servers=3000,5432 (those ports only) or --local-servers=off");
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const auto value = parse_port(item);
    if (!value) return bad(item);
    out.ports.push_back(*value);
    start = comma + 1;
  }
  std::sort(out.ports.begin(), out.ports.end());
  out.ports.erase(std::unique(out.ports.begin(), out.ports.end()), out.ports.end());
  out.on = true;
  return out;
}

}  // namespace px::policy
