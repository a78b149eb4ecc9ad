// The process limit's range check, shared by the profile parser (build time
// and a user's file), agent.yaml and the PolicyBuilder.
#include <string>

#include "policy/policy.hpp"

namespace px::policy {

std::string check_process_limit(std::uint64_t max) {
  if (max >= ProcessLimit::kMin && max <= ProcessLimit::kMax) return "";
  return std::to_string(max) + " is out of range: give " + std::to_string(ProcessLimit::kMin) + " to " +
         std::to_string(ProcessLimit::kMax) + " processes (the default is " +
         std::to_string(ProcessLimit::kDefault) + ")";
}

}  // namespace px::policy
