#pragma once
// The checks a value of a policy goes through, whoever gives it (a profile,
// a flag, an agent, a plugin): one per kind. Each returns the rule a value
// breaks ("" when it breaks none), in words that follow "which": the caller
// names the source and the value in its own message.
//
// Why each rule: a control character in a value (a newline in a reason, an
// escape sequence) would break `policy show` and the terminal it prints to;
// a ".." would be normalised into a path other than the one written
// (`~/.app/../.bashrc` is `~/.bashrc`), so it is refused, never resolved.
#include <string>
#include <string_view>

namespace px::policy {

// A control character (a NUL, a newline, an escape).
std::string check_text(std::string_view text);
// A path as written: empty, a control character, or a ".." part.
std::string check_path_text(std::string_view text);

// The message for a value a plugin gave and a rule refused:
// `plugin NAME's CALLBACK gave the WHAT "VALUE", which RULE; the plugin needs fixing`.
// The value is shown escaped (common/shown.hpp) and cut at 200 bytes.
std::string refused_from_plugin(std::string_view plugin, std::string_view callback, std::string_view what,
                                std::string_view value, std::string_view rule);

}  // namespace px::policy
