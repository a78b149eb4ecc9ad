#pragma once
// The Policy as JSON: `parallex policy show --json`, run records, and (without
// origins) the input of Policy::digest().
#include <nlohmann/json.hpp>

#include "policy/policy.hpp"

namespace px::policy {

nlohmann::json to_json(const Policy& policy, bool with_origins = true);
// The broker's part ({requests: [...], credentials: [...]}): sources, never secrets.
nlohmann::json broker_to_json(const Policy& policy, bool with_origins = true);

}  // namespace px::policy
