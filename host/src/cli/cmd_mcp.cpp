// `parallex mcp`: the MCP server on stdin/stdout, for Claude Code
// (`claude mcp add parallex -- parallex mcp`), Codex ([mcp_servers.parallex])
// and other MCP clients. stdout carries only protocol messages; logs go to stderr.
#include <signal.h>
#include <unistd.h>

#include "cli/command.hpp"
#include "mcp/server.hpp"

namespace px::cli {
namespace {

Action setup(CLI::App& app, GlobalOptions&) {
  auto timeout = std::make_shared<int>(30);
  app.add_option("--browser-timeout", *timeout, "Seconds open_browser waits for a headless page (default 30)")
      ->check(CLI::Range(1, 600));
  return [timeout]() -> int {
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

PARALLEX_COMMAND("mcp", "The MCP server for Claude Code, Codex and other MCP clients (stdio)", 40, setup);

}  // namespace px::cli
