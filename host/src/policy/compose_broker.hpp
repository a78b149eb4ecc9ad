#pragma once
// Composition of the broker's entries (policy/brokered.hpp), in rising
// precedence: the harness plugin's provider keys, the credentials parallex
// holds for the run (the agent's token), the profiles' sections, agent.yaml's.
// A later layer replaces an earlier one's credential of the same name, or a
// host's rules, whole; `NAME: off` drops a credential.
#include "policy/compose.hpp"
#include "policy/policy_builder.hpp"

namespace px::policy {

void apply_broker(PolicyBuilder& b, const ComposeInputs& in, const fs::path& user_home);

}  // namespace px::policy
