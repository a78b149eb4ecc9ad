#pragma once
// `parallex agent credential NAME get|store|erase`: the agent's one git
// credential helper. It speaks git's credential protocol (git-credential(1))
// and gives the agent's own token over HTTPS to the hosts its token is bound
// to (GitHub's own, or those agent.yaml names), nothing else.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace px::agents {

// GitHub's own hosts: where the agent's token goes unless agent.yaml binds it
// elsewhere (`credentials: {github: {hosts: [...]}}`).
std::vector<std::string> github_own_hosts();

// The helper's answer to `action` ("get", "store", "erase") with git's
// `request` (key=value lines). For get over https to one of `hosts` (exact
// names, any port): the token, or, when the agent has none, quit=1 so git
// neither asks the terminal nor tries another helper. Anything else, another
// host included: an empty answer (git's "no answer").
std::string credential_answer(std::string_view action, std::string_view request,
                              const std::optional<std::string>& token, const std::vector<std::string>& hosts);

}  // namespace px::agents
