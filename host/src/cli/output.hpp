#pragma once
// Small helpers for what commands print: errors in one format, JSON output.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace px::cli {

// Prints "parallex: <message>" (redacted) to stderr and returns the exit status for it.
int report_error(const Error& error);
void print_json(const nlohmann::json& value);
// True when stdout is a terminal (progress bars).
bool stdout_is_tty();
// Whether what goes to stdout may have colour: a terminal, and NO_COLOR unset
// or empty (no-color.org), and TERM not "dumb".
bool colour_on_stdout();
// Asks `question` on the terminal (stderr, stdin); false without a terminal.
// `yes` (a --yes flag) answers for the user.
bool confirm(const std::string& question, bool yes);

}  // namespace px::cli
