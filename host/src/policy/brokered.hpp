#pragma once
// What the run's credential broker does, as the Policy states it
// (docs/broker.md): request rules per host, hosts kept as end-to-end tunnels
// (passthrough), and brokered credentials. The Policy holds where each secret
// is read, never a secret: a secret held by parallex itself (the agent's
// token) is a source of kind `value` with no value and the name of its holder;
// the run's plan carries the value to the supervisor.
#include <filesystem>
#include <string>
#include <vector>

#include "broker/credential_spec.hpp"
#include "broker/request_rules.hpp"
#include "policy/origin.hpp"

namespace px::policy {

// A host the broker terminates for its request rules, or keeps an
// end-to-end tunnel (passthrough: pinning clients; no rules, no credential).
// The last layer that names a host gives its entry whole.
struct HostRequestRules {
  std::string host;  // exact, normalized (parse_exact_host)
  bool passthrough = false;
  std::vector<broker::RequestRule> rules;  // first match wins; each keeps the text of its origin
  Origin origin;
};

struct BrokeredCredential {
  // spec.origin is origin.describe(); spec.source never holds a value here.
  broker::CredentialSpec spec;
  // A harness plugin's default for a provider key: brokered only when its
  // variable is set where parallex runs; otherwise it is not part of the run.
  bool when_set = false;
  // A variable naming the provider's base URL (ANTHROPIC_BASE_URL): when it is
  // set to an https:// URL, the credential goes to that URL's host instead of
  // `spec.hosts` (the user chose that server for the key).
  std::string base_url_variable;
  // Files the run may read that hold the secret (the agent's gh/hosts.yml):
  // the run's view shows each with the placeholder in the secret's place.
  std::vector<std::filesystem::path> masked_files;
  std::string reason;
  Origin origin;
};

// The secret-free name a credential is known by: lower case letters, digits,
// '-' and '_' (e.g. "github", "anthropic-api-key"); empty when valid, else why not.
std::string check_credential_name(std::string_view name);

// "anthropic-api-key" for the variable ANTHROPIC_API_KEY: the name of a
// credential a plugin contributes by its variable.
std::string credential_name_of_variable(std::string_view variable);

}  // namespace px::policy
