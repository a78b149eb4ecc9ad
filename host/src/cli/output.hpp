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
// True when stdout is a terminal (colour, progress bars).
bool stdout_is_tty();

}  // namespace px::cli
