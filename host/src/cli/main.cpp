// `parallex`: parses the command line and runs one registered command.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/parse_errors.hpp"
#include "cli/version_info.hpp"
#include "common/exit_fast.hpp"
#include "common/logging.hpp"
#include "supervisor/sweep_after_death.hpp"

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

// The first word of the command line that is not an option: the command
// asked for, unless a global option's value comes first (`--log-level debug
// run`), which then names no command and gets the whole tree.
std::string command_asked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return {};
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PX_LEAK_CHECK_AT_EXIT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PX_LEAK_CHECK_AT_EXIT 1
#endif

// A command has finished its work when it returns: its records written, its
// files removed, its children reaped, its output flushed below. What exit()
// would still do is free memory: destroy the command tree, the policy and the
// plugins' state and unload the plugins, which the kernel does faster by
// dropping the address space, and that drop happens after the caller has the
// status (common/exit_fast.hpp). Sanitizer builds exit normally: their leak
// check runs at exit.
int exit_now(int status) {
#ifdef PX_LEAK_CHECK_AT_EXIT
  return status;
#else
  px::exit_fast(status);
#endif
}

}  // namespace px::cli

int main(int argc, char** argv) {
  using namespace px::cli;
  // The run's watchdog execs this executable to sweep a run whose supervisor
  // died (supervisor/sweep_after_death.hpp); answered before anything else.
  if (const auto swept = px::supervisor::sweep_entry(argc, argv)) return *swept;
  // `--version` alone is answered before the command tree is built: it is what
  // scripts and package managers call, and it should cost no more than a
  // bare process start (README, Measured).
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::fputs(version_text().c_str(), stdout);
    return px::cli::exit_now(0);
  }
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
  app.footer(
      "-v and --log-level work after any command too. Every command has a man page: man parallex-run, "
      "man parallex-agent-new, ...");
  GlobalOptions global;
  app.add_option("--log-level", global.log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag("-v,--verbose", global.verbose, "Log at debug level");

  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(), [](auto& a, auto& b) { return a.order < b.order; });
  // Only the command asked for declares its options: declaring all of them
  // (some 300, with their validators) took most of a start's 0.65 ms of parsing.
  // Every command is still named (help lists them). The commands that read
  // the whole tree, a word that names no command and no command at all get
  // the whole tree.
  const std::string asked = command_asked(argc, argv);
  const bool whole_tree =
      asked.empty() || asked == "completion" || asked == "man" ||
      std::none_of(registry.begin(), registry.end(), [&](const CommandInfo& c) { return asked == c.name; });
  Action chosen;
  for (auto& command : registry) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    if (command.hidden) sub->group("");
    if (!whole_tree && asked != command.name) continue;  // named, never parsed
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
  return px::cli::exit_now(status);
}
