#pragma once
// The human-readable rendering of a Policy for `parallex policy show`: one
// entry a line, each with the rule's origin and reason.
#include <string>

#include "policy/policy.hpp"

namespace px::cli {

std::string render_policy(const policy::Policy& policy);
// The broker's part (policy_text_broker.cpp): credentials with where each
// secret is read (never a value), request rules and passthrough hosts.
std::string render_broker_policy(const policy::Policy& policy);

}  // namespace px::cli
