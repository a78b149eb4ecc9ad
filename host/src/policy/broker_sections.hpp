#pragma once
// The broker's two sections of a profile or of agent.yaml, as read (before
// they become Policy entries): `requests` (request rules per host, or
// passthrough) and `credentials` (brokered credentials, or `off`). See
// broker_yaml.hpp for the syntax and docs/broker.md.
#include <set>
#include <string>
#include <vector>

#include "broker/credential_spec.hpp"
#include "broker/request_rules.hpp"

namespace px::policy {

struct RequestRulesSection {
  std::string host;  // as written; checked by the PolicyBuilder
  bool passthrough = false;
  std::vector<broker::RequestRule> rules;  // parsed (parse_request_rule), origin text "FILE:LINE"
  int line = 0;
};

struct CredentialSection {
  broker::CredentialSpec spec;  // name, source, hosts, env, headers, shape, expires
  bool off = false;             // `NAME: off`: an earlier layer's (or a default) credential is dropped
  // Without `secret`: an amendment of the credential of that name an earlier
  // layer (or a default: the agent's token) made; `given` lists the keys
  // written (hosts, env, headers, shape, expires), which replace its own.
  bool amends = false;
  std::set<std::string> given;
  int line = 0;
};

struct BrokerSections {
  std::vector<RequestRulesSection> requests;
  std::vector<CredentialSection> credentials;
  bool empty() const { return requests.empty() && credentials.empty(); }
};

}  // namespace px::policy
