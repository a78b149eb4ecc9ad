#pragma once
// The human-readable rendering of a Policy for `parallex policy show`: one
// entry a line, each with the rule's origin and reason.
#include <string>

#include "policy/policy.hpp"

namespace px::cli {

std::string render_policy(const policy::Policy& policy);

}  // namespace px::cli
