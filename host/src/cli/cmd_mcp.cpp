// `parallex mcp`: the MCP server on stdin/stdout, for Claude Code, Codex,
// opencode and other MCP clients. stdout carries only protocol messages; logs
// go to stderr. `parallex mcp install CLIENT` puts it into a client's config.
#include <signal.h>
#include <unistd.h>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/paths.hpp"
#include "mcp/install.hpp"
#include "mcp/server.hpp"

namespace px::cli {
namespace {

int install(const std::string& client) {
  const fs::path self = parallex_executable();
  auto done = mcp::install(client, self);
  if (!done) return report_error(done.error());
  const mcp::Installed& i = done.value();
  if (i.changed)
    std::printf("Added the MCP server to %s's config %s: %s\n", i.client.c_str(), i.config.c_str(),
                i.entry.c_str());
  else
    std::printf("%s's config %s has it already: %s\n", i.client.c_str(), i.config.c_str(), i.entry.c_str());
  return 0;
}

Action setup_mcp(CLI::App& app, GlobalOptions&) {
  app.require_subcommand(0, 1);
  auto timeout = std::make_shared<int>(30);
  app.add_option("--browser-timeout", *timeout, "Seconds open_browser waits for a headless page (default 30)")
      ->check(CLI::Range(1, 600));
  auto client = std::make_shared<std::string>();
  CLI::App* add = app.add_subcommand("install",
                                     "Add this executable's MCP server to a client's config (claude, codex "
                                     "or opencode), by its absolute path");
  add->add_option("client", *client, "claude, codex or opencode")
      ->required()
      ->check(CLI::IsMember({"claude", "codex", "opencode"}));
  return [timeout, client, add]() -> int {
    if (add->parsed()) return install(*client);
    // A client that goes away mid-answer is an ordinary end, not a signal.
    ::signal(SIGPIPE, SIG_IGN);
    mcp::ServerOptions options;
    options.version = PARALLEX_VERSION;
    options.run = mcp::detect_run_identity();
    options.browser_timeout = std::chrono::seconds(*timeout);
    mcp::FdTransport transport(STDIN_FILENO, STDOUT_FILENO);
    mcp::Server server(transport, options);
    return server.serve();
  };
}

}  // namespace

PARALLEX_COMMAND("mcp",
                 "The MCP server for Claude Code, Codex, opencode and other MCP clients (stdio); mcp install "
                 "CLIENT adds it",
                 40, setup_mcp);

}  // namespace px::cli
