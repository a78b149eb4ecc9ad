#pragma once
// What an agent's name and email may be. A name becomes a folder name and part
// of git's user.name, so it is kept to a small, path-safe alphabet.
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace px::agents {

inline constexpr std::size_t max_name_length = 64;

// [a-z0-9][a-z0-9._-]*, at most 64 characters.
Status check_name(std::string_view name);
// local@domain.tld, no spaces, no control characters, no '<' '>' (git's delimiters).
Status check_email(std::string_view email);
// OWNER/REPO as GitHub spells them.
Status check_repo(std::string_view repo);

}  // namespace px::agents
