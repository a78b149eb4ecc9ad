#pragma once
// Text a user or a run gave, as it is shown in a message: every control byte
// (a NUL, an escape sequence, a newline) and every byte that is not UTF-8 is
// written as \xNN (\n and \t as such), so that what reaches the terminal is
// exactly what was given, visibly; letters of any language (ÜBER, 名前) stay
// as they are.
//
// And the one check every value from a file, a flag or a message goes
// through at load time: a NUL byte cuts a value short wherever it reaches a
// C string (a path, an environment variable, an argument), so a value that
// holds one is refused, named, rather than read as its first part.
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace px {

std::string shown(std::string_view text);
// A message for the terminal: as shown(), but its own line breaks stay line
// breaks, and past `max_bytes` it is cut (a value of 100,000 bytes named in an
// error does not come back whole), saying how much was left out.
std::string shown_lines(std::string_view text, std::size_t max_bytes = 8192);

// An error naming `what` ("the profile entry filesystem.read", "--grant",
// "the MCP argument 'path'") and the value, shown, when `value` holds a NUL
// byte; ok otherwise.
Status refuse_nul(std::string_view value, std::string_view what);

}  // namespace px
