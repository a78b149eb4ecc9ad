#pragma once
// Small helpers for what commands print: errors in one format, JSON output.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace px::cli {

// Prints "parallex: <message>" to stderr, redacted and shown (common/shown.hpp:
// a control byte or a byte that is not UTF-8 in an input it names never reaches
// the terminal raw, and a huge input is not printed whole).
void say(const std::string& message);
// say()s the error and returns the exit status for it.
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
