#pragma once
// The one redactor for logs, reports, MCP answers and error messages. It knows
// the shapes of common credentials and any literal secret registered at run
// time (the proxy password, an agent's token), and replaces them with a marker
// that names the shape but not the value.
#include <string>
#include <string_view>

namespace px {

// Replaces every known secret shape and every registered literal in `text`.
std::string redact(std::string_view text);

// Registers a literal secret for this process (thread-safe). Values shorter
// than 8 bytes are ignored: redacting them would mangle ordinary text.
void register_secret(std::string_view secret);

}  // namespace px
