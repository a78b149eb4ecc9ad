#pragma once
// Each `parallex` sub-command lives in its own file and registers itself here
// with PARALLEX_COMMAND, so adding a command touches no shared list.
// A command's setup() declares its options on the CLI11 sub-app and returns the
// action to run once parsing succeeded; the action returns the exit status.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace px::cli {

struct GlobalOptions {
  std::string log_level = "warn";
  bool verbose = false;
};

using Action = std::function<int()>;
using Setup = Action (*)(CLI::App& app, GlobalOptions& global);

struct CommandInfo {
  const char* name;
  const char* summary;
  Setup setup;
  int order;  // position in `parallex --help`
};

std::vector<CommandInfo>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(const char* name, const char* summary, Setup setup, int order) {
    command_registry().push_back({name, summary, setup, order});
  }
};

}  // namespace px::cli

#define PX_CLI_CONCAT2(a, b) a##b
#define PX_CLI_CONCAT(a, b) PX_CLI_CONCAT2(a, b)
#define PARALLEX_COMMAND(name, summary, order, setup_fn) \
  static const ::px::cli::CommandRegistrar PX_CLI_CONCAT(px_command_, __LINE__)(name, summary, setup_fn, order)
