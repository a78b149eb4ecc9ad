#pragma once
// The report's views. All render the same JSON document (build_report), with
// the same sections: run, sessions, files read, files changed, commands, URLs,
// hosts, commits, sources.
#include <string>

#include "report/model.hpp"

namespace px::report {

// Tables for a terminal. `colour`: ANSI colours (only when stdout is a tty).
// Control characters from the sources are shown escaped, never sent to the terminal.
std::string render_terminal(const Json& report, bool colour);

// One self-contained HTML page: inline CSS, no script, no external asset (a
// Content-Security-Policy forbids loading any); every value HTML-escaped.
std::string render_html(const Json& report);

// Shared by the views.
// A record's field as text: "" when missing or null, a string as it is,
// anything else as JSON.
std::string str(const Json& record, const char* key);
std::string human_bytes(std::uint64_t bytes);
std::string exit_text(const Json& exit_status);

}  // namespace px::report
