#pragma once
// A parsed Profile as data: what the build stores for the built-in profiles
// (CBOR, decoded at run time without the YAML parser) and what tests compare.
// Every field of Profile is here, in both directions, but its broker sections
// (credentials:, requests:), which a built-in profile may not hold
// (precompile_profiles refuses one).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/profile.hpp"

namespace px::policy {

nlohmann::json profile_to_json(const Profile& profile);
Result<Profile> profile_from_json(const nlohmann::json& j, const std::string& display_name);

std::vector<std::uint8_t> profile_to_cbor(const Profile& profile);
Result<Profile> profile_from_cbor(const unsigned char* data, std::size_t size,
                                  const std::string& display_name);

}  // namespace px::policy
