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
  int order;            // position in `parallex --help`
  bool hidden = false;  // internal (generators run by the build): not in help, man pages or completions
};

std::vector<CommandInfo>& command_registry();

// A sub-command of a command that lives in another component's file (e.g.
// `agent snapshot` next to the snapshot commands), so that each file keeps one
// component's commands. The parent command adds every entry registered under
// its name.
using SubSetup = Action (*)(CLI::App& sub);
struct SubcommandInfo {
  const char* parent;
  const char* name;
  const char* summary;
  SubSetup setup;
  int order;  // position in `parallex PARENT --help`
};
std::vector<SubcommandInfo>& subcommand_registry();
// The entries under `parent`, in order.
std::vector<SubcommandInfo> subcommands_of(const std::string& parent);

// An option a command takes from another component: `agent -w NAME -- CMD`
// comes from the workspace component. `setup` declares options on the parent
// app and returns an action when they were given (empty otherwise), checked
// after parsing.
using ExtensionSetup = std::function<Action()> (*)(CLI::App& parent);
struct ExtensionInfo {
  const char* parent;
  ExtensionSetup setup;
};
std::vector<ExtensionInfo>& extension_registry();

struct SubcommandRegistrar {
  SubcommandRegistrar(const char* parent, const char* name, const char* summary, SubSetup setup, int order) {
    subcommand_registry().push_back({parent, name, summary, setup, order});
  }
};
struct ExtensionRegistrar {
  ExtensionRegistrar(const char* parent, ExtensionSetup setup) {
    extension_registry().push_back({parent, setup});
  }
};

struct CommandRegistrar {
  CommandRegistrar(const char* name, const char* summary, Setup setup, int order, bool hidden = false) {
    command_registry().push_back({name, summary, setup, order, hidden});
  }
};

}  // namespace px::cli

#define PX_CLI_CONCAT2(a, b) a##b
#define PX_CLI_CONCAT(a, b) PX_CLI_CONCAT2(a, b)
#define PARALLEX_COMMAND(name, summary, order, setup_fn)                                                    \
  static const ::px::cli::CommandRegistrar PX_CLI_CONCAT(px_command_, __COUNTER__)(name, summary, setup_fn, \
                                                                                   order)
#define PARALLEX_HIDDEN_COMMAND(name, summary, setup_fn)                                                    \
  static const ::px::cli::CommandRegistrar PX_CLI_CONCAT(px_command_, __COUNTER__)(name, summary, setup_fn, \
                                                                                   1000, true)
#define PARALLEX_SUBCOMMAND(parent, name, summary, order, setup_fn)                       \
  static const ::px::cli::SubcommandRegistrar PX_CLI_CONCAT(px_subcommand_, __COUNTER__)( \
      parent, name, summary, setup_fn, order)
#define PARALLEX_COMMAND_EXTENSION(parent, setup_fn) \
  static const ::px::cli::ExtensionRegistrar PX_CLI_CONCAT(px_extension_, __COUNTER__)(parent, setup_fn)
