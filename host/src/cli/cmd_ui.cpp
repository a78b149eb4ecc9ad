// `parallex ui [--no-open] [--port N]`: a local web page to watch and steer
// every agent (docs/ui.md). Served on 127.0.0.1 only, with a per-launch key
// in the address exchanged for a cookie; its port is published for the runs'
// proxies to refuse (common/ui_ports.hpp), so no run can reach it.
#include <signal.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/port_option.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/spawn.hpp"
#include "common/ui_ports.hpp"
#include "ui/api.hpp"
#include "ui/server.hpp"

namespace px::cli {
namespace {

struct UiOptions {
  bool no_open = false;
  int port = 0;
};

// $BROWSER (a program name or path, as most tools read it), else xdg-open
// in a desktop session; nullopt when there is neither.
std::optional<std::string> ui_opener() {
  const char* path_env = std::getenv("PATH");
  if (const char* b = std::getenv("BROWSER"); b && *b)
    if (auto found = find_executable(b, path_env ? path_env : "")) return found->string();
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) return std::nullopt;
  if (auto found = find_executable("xdg-open", path_env ? path_env : "")) return found->string();
  return std::nullopt;
}

int ui_run(const UiOptions& o) {
  auto server = ui::UiServer::listen(static_cast<std::uint16_t>(o.port));
  if (!server) return report_error(server.error());
  auto& s = *server.value();
  const std::uint16_t port = s.port();
  // Published before the address is given: from then on no run's proxy opens it.
  auto published = UiPortFile::publish(parallex_runtime_dir(), port);
  if (!published) return report_error(published.error());
  const std::string secret = ui::new_ui_secret();
  register_secret(secret);  // in no log line
  const ui::UiRules rules(port, secret, ui::api_routes());
  const std::string address = "http://127.0.0.1:" + std::to_string(port) + "/?key=" + secret;
  std::printf("Parallex UI: %s\n", address.c_str());
  if (!o.no_open) {
    if (const auto opener = ui_opener()) {
      // Not waited for: a browser may stay in the foreground until closed.
      if (auto pid = spawn_process({.argv = {*opener, address}}); !pid) say(pid.error().message);
    } else {
      std::printf(
          "No browser to open it with ($BROWSER unset, no desktop session): open the address above.\n");
    }
  }
  std::printf("Stop it with Ctrl-C.\n");
  std::fflush(stdout);
  // SIGINT and SIGTERM end it cleanly (the port file removed), taken by a
  // thread of their own.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    s.stop();
  });
  s.serve(rules, 4);
  if (waiter.joinable()) {
    // serve() returned on a signal: the waiter has already ended.
    waiter.join();
  }
  return 0;
}

Action setup_ui(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<UiOptions>();
  app.add_flag("--no-open", o->no_open, "Print the address (with its key) and open no browser");
  app.add_option("--port", o->port, "Listen on this port of 127.0.0.1 (default: a free one)")
      ->check(port_number());
  return [o] { return ui_run(*o); };
}

}  // namespace

PARALLEX_COMMAND("ui", "A local web page to watch and steer every agent (pause all, grants, reports)", 37,
                 setup_ui);

}  // namespace px::cli
