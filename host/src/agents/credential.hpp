#pragma once
// `parallex agent credential NAME get|store|erase`: the agent's one git
// credential helper. It speaks git's credential protocol (git-credential(1))
// and gives the agent's own token for GitHub over HTTPS, nothing else.
#include <optional>
#include <string>
#include <string_view>

namespace px::agents {

// The helper's answer to `action` ("get", "store", "erase") with git's
// `request` (key=value lines). For get on https://github.com: the token, or,
// when the agent has none, quit=1 so git neither asks the terminal nor tries
// another helper. Anything else: an empty answer.
std::string credential_answer(std::string_view action, std::string_view request,
                              const std::optional<std::string>& token);

}  // namespace px::agents
