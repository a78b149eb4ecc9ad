#pragma once
// What `parallex` says when it cannot make sense of its command line: one line
// starting "parallex:", naming the word it stumbled on and the command it was
// parsing, and the --help that explains it. Exit status 2.
#include <CLI/CLI.hpp>

namespace px::cli {

int report_parse_error(CLI::App& app, const CLI::ParseError& error, int argc, const char* const* argv);

// The visible sub-commands of `app` (hidden ones, like the generators the build runs, left out).
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app);

}  // namespace px::cli
