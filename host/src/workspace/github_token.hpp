#pragma once
// The project's scoped GitHub token, `.parallex/github-token`: read, never
// written. Its shape is checked so a pasted URL or an old OAuth token fails
// here, with the file named, rather than as a 401 deep inside a run.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "policy/brokered.hpp"

namespace px::workspace {

// "" when `token` looks like a GitHub personal access token (github_pat_...
// fine-grained, or ghp_... classic), else what is wrong with it.
std::string check_github_token(std::string_view token);

// The token, or nullopt when the file does not exist. Surrounding whitespace
// (a trailing newline) is dropped; an empty or malformed file is an error.
// The value is registered with the redactor.
Result<std::optional<std::string>> load_github_token(const std::filesystem::path& file);

// The token as the run's brokered credential "github" (github.com,
// api.github.com, uploads.github.com; GH_TOKEN), held by parallex: the
// secret travels in the run's plan, the file is shown with the placeholder
// wherever the run may read it.
policy::BrokeredCredential brokered_github_token(const std::filesystem::path& file);

}  // namespace px::workspace
