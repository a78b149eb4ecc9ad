#pragma once
// A brokered credential as the policy states it (profiles, agent.yaml, the
// agent's token, the harness plugins): plain data, no secret (a source says
// where the secret is read), so the Policy can hold and print it.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/secret_source.hpp"
#include "common/port.hpp"

namespace px::broker {

struct CredentialSpec {
  std::string name;  // "github", "anthropic"
  SecretSource source;
  std::vector<std::string> hosts;    // exact host names it may be sent to (normalized)
  std::vector<std::string> headers;  // header names it is swapped in beside Authorization and x-api-key
  std::vector<std::string> env;      // variables the run gets holding the placeholder (GH_TOKEN)
  std::string shape;                 // "", "github-token", "anthropic-key", "openai-key": checked when set
  std::optional<std::chrono::system_clock::time_point> expires;
  std::string origin;  // where it was declared, for `policy show`
};

// A credential bound to a model server on this machine is bound to
// "localhost:PORT" (a base URL naming localhost, 127.0.0.1 or [::1], or a
// profile's hosts: [localhost:8080]): the broker sits in front of that port
// only, and no other of this machine's servers gets the secret.
inline std::string local_server_binding(std::uint16_t port) {
  return "localhost:" + std::to_string(port);
}

// The port of such a binding; nullopt for a host name.
inline std::optional<std::uint16_t> local_server_port(std::string_view binding) {
  constexpr std::string_view prefix = "localhost:";
  if (binding.substr(0, prefix.size()) != prefix) return std::nullopt;
  return parse_port(binding.substr(prefix.size()));
}

}  // namespace px::broker
