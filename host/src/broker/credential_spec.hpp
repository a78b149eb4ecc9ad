#pragma once
// A brokered credential as the policy states it (profiles, agent.yaml, the
// agent's token, the harness plugins): plain data, no secret (a source says
// where the secret is read), so the Policy can hold and print it.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "broker/secret_source.hpp"

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

}  // namespace px::broker
