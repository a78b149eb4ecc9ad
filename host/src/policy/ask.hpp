#pragma once
// The one spelling of ask mode, for the run commands (`--ask`, `--ask=90`,
// `--ask=off`), profiles and agent.yaml (`network.ask: true | 90 | false`): a
// connection outside the network rule is held while the user is asked
// (`parallex approve` / `parallex deny`), for up to that many seconds, then
// refused as without it. Off unless the user turns it on.
#include <chrono>
#include <string_view>

#include "common/error.hpp"

namespace px::policy {

// How long a question waits when ask mode is turned on without a time.
inline constexpr std::chrono::seconds kDefaultAskTimeout{120};
// The longest a connection may be held: a program's own timeout is shorter
// than this, and a question nobody sees should not hold a socket for hours.
inline constexpr std::chrono::seconds kMaxAskTimeout{3600};

// `text`: "" / "on" / "true" (the default time), "off" / "false" / "0"
// (off), or whole seconds 1..3600. `where` names the input in errors.
Result<std::chrono::seconds> parse_ask(std::string_view text, const std::string& where);

}  // namespace px::policy
