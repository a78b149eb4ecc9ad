#pragma once
// What an agent run looks at in the repository it works in (libgit2, read-only):
// its refs at start and end (for the run record and the report), and tokens
// its own config holds, which the agent's git would use there as git does.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::agents {

namespace fs = std::filesystem;

// {"repository": workdir-or-gitdir, "head": "refs/heads/main" or oid, "refs": {name: oid}}
// for the repository holding `dir`, or nullopt when `dir` is in none.
Result<std::optional<nlohmann::json>> repository_refs(const fs::path& dir);

// Keys of the repository's own config (not the user's or the system's) whose
// value holds credentials in a URL (https://user:secret@..., https://ghp_...@...).
// Only the keys are returned, never the values.
Result<std::vector<std::string>> config_keys_with_tokens(const fs::path& dir);

// True when `url` carries a password or a token in its user info.
bool url_holds_credentials(const std::string& url);

}  // namespace px::agents
