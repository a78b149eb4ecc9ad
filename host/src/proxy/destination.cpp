#include "proxy/destination.hpp"

#include <algorithm>

#include "common/host_rule.hpp"
#include "common/paths.hpp"
#include "common/ui_ports.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy {
namespace {

bool contains(const std::vector<std::uint16_t>& ports, std::uint16_t port) {
  return std::find(ports.begin(), ports.end(), port) != ports.end();
}

}  // namespace

DestinationDecision decide_destination(const ProxyConfig& cfg, const std::vector<std::uint16_t>& ports,
                                       const HostPort& target) {
  DestinationDecision d;
  d.by_rule = true;
  // Offline reaches nothing, this machine included, unless a name was allowed
  // while the run went on (its ports are then in `ports`).
  if (cfg.mode == NetworkMode::offline && (ports.empty() || is_loopback_name(target.host))) {
    d.verdict = {403, reason::offline};
    return d;
  }
  if (is_loopback_name(target.host)) {
    // Never sent to a resolver: localhost (and 127.0.0.1, [::1], which
    // interpret() lets through only then) is this machine, and only Local
    // servers may reach it, on any port.
    if (!cfg.local_port_allowed(target.port)) {
      const auto ui =
          cfg.local_servers ? live_ui_ports(parallex_runtime_dir()) : std::vector<std::uint16_t>{};
      d.verdict = {403, contains(ui, target.port) ? reason::ui_port : reason::local_servers_off};
      return d;
    }
    d.route = Route::loopback;
    return d;
  }
  if (ports.empty()) {
    d.verdict = {403, reason::not_allowed};
    return d;
  }
  if (!contains(ports, target.port)) {
    d.verdict = {403, reason::port_not_allowed};
    return d;
  }
  d.by_rule = false;
  d.route = Route::resolve;
  return d;
}

bool askable(std::string_view why) {
  return why == reason::not_allowed || why == reason::port_not_allowed || why == reason::offline;
}

bool ProxyConfig::local_port_allowed(std::uint16_t port) const {
  if (!local_servers || !(local_server_ports.empty() ||
                          std::binary_search(local_server_ports.begin(), local_server_ports.end(), port)))
    return false;
  // Never the port of a live `parallex ui` of this user, whatever Local
  // servers names: it grants folders and approves hosts (common/ui_ports.hpp).
  // Read at each decision, so a UI started after the run is refused too.
  return !contains(live_ui_ports(parallex_runtime_dir()), port);
}

std::vector<std::uint16_t> allowed_ports_for(const ProxyConfig& cfg, std::string_view name) {
  std::vector<std::uint16_t> out;
  if (cfg.mode == NetworkMode::offline) return out;
  if (cfg.mode == NetworkMode::online) {
    out = cfg.allowed_ports;
  } else {
    for (const auto& rule : cfg.rules) {
      if (!host_rule_matches(name, rule.pattern)) continue;
      if (rule.port) {
        out.push_back(*rule.port);
      } else {
        out.insert(out.end(), cfg.allowed_ports.begin(), cfg.allowed_ports.end());
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace px::proxy
