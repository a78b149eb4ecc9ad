#pragma once
// The command line as data, read from the CLI11 app tree itself: the one source
// of truth the man pages and the shell completions are generated from, so they
// can never describe options the parser does not have.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace px::cli {

struct OptionDoc {
  std::vector<std::string> names;    // "-v", "--verbose"; for a positional, its name
  std::string value;                 // what it takes ("TEXT", "NAME"); empty for a flag
  std::vector<std::string> choices;  // the only values it accepts, when it has such a list
  std::string description;
  bool positional = false;
  bool required = false;
  bool repeatable = false;
};

struct CommandDoc {
  std::vector<std::string> path;  // {"agent", "run"}; empty for `parallex` itself
  std::string summary;
  std::vector<OptionDoc> options;  // --help included
  std::vector<CommandDoc> subcommands;
  bool takes_command = false;  // a command to run follows `--`

  std::string words() const;  // "parallex agent run"
  std::string page() const;   // "parallex-agent-run"
};

// The visible commands and options under `root` (hidden ones left out).
CommandDoc describe_cli(CLI::App& root);
// `root`'s own App: the root of the tree `app` belongs to.
CLI::App& root_of(CLI::App& app);

}  // namespace px::cli
