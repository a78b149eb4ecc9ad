// `parallex`: parses the command line and runs one registered command.
#include "cli/entry.hpp"

#include <algorithm>
#include <exception>

#include "cli/command.hpp"
#include "cli/opener.hpp"
#include "cli/output.hpp"
#include "cli/parse_errors.hpp"
#include "cli/version_info.hpp"
#include "common/logging.hpp"
#include "pluginhost/discovery.hpp"
#include "protect/sweep_after_death.hpp"

namespace px::cli {

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

std::vector<SubcommandInfo>& subcommand_registry() {
  static std::vector<SubcommandInfo> registry;
  return registry;
}

std::vector<SubcommandInfo> subcommands_of(const std::string& parent) {
  std::vector<SubcommandInfo> out;
  for (const auto& s : subcommand_registry())
    if (parent == s.parent) out.push_back(s);
  std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.order < b.order; });
  return out;
}

std::vector<ExtensionInfo>& extension_registry() {
  static std::vector<ExtensionInfo> registry;
  return registry;
}

int main(int argc, char** argv) {
  // The run's watchdog execs this executable to sweep a run whose supervisor
  // died (protect/sweep_after_death.hpp); answered before anything else.
  if (const auto swept = px::protect::sweep_entry(argc, argv)) return *swept;
  // Inside a sealed run, run as xdg-open or $BROWSER: the run's opener.
  if (const auto opened = opener_entry(argc, argv)) return *opened;
  // The name is fixed, so usage lines say `parallex`, not the path argv[0] was run by.
  CLI::App app{"parallex: run AI coding agents sealed, under an identity of their own", "parallex"};
  app.require_subcommand(1);
  // CLI11 ends what it prints with a newline of its own.
  std::string version = version_text();
  version.pop_back();
  app.set_version_flag("--version", version);
  // Global options are accepted after the sub-command too (`parallex agent list -v`):
  // sub-commands made below inherit this and hand options they do not know to their parent.
  app.fallthrough();
  // Inherited by every command's --help, as the options are.
  // The build's own executable has no page installed: it names the ones its build wrote.
  const std::filesystem::path build = px::pluginhost::build_tree_of_this_executable();
  const std::string pages = build.empty()
                                ? std::string("man parallex-run, man parallex-agent-new, ...")
                                : "man -l " + (build / "share/man/man1/parallex-run.1").string() +
                                      " (the build's pages: " + (build / "share/man/man1").string() + ")";
  app.footer("-v and --log-level work after any command too. Every command has a man page: " + pages);
  GlobalOptions global;
  app.add_option("--log-level", global.log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag("-v,--verbose", global.verbose, "Log at debug level");

  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(), [](auto& a, auto& b) { return a.order < b.order; });
  Action chosen;
  for (auto& command : registry) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    if (command.hidden) sub->group("");
    Action action = command.setup(*sub, global);
    sub->callback([&chosen, action] { chosen = action; });
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e, argc, argv);
  }
  px::init_logging(global.verbose ? "debug" : global.log_level);
  int status = 2;
  try {
    status = chosen ? chosen() : 2;
  } catch (const std::exception& e) {
    px::cli::say(std::string("internal error: ") + e.what());
    status = 70;
  }
  return status;
}

}  // namespace px::cli
