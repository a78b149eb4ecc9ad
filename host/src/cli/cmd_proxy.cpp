// `parallex proxy`: the per-run proxy on its own, for trying rules and for
// clients outside a run. Prints the bound address on its first line.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "cli/command.hpp"
#include "cli/port_option.hpp"
#include "cli/run_command.hpp"
#include "common/port.hpp"
#include "common/redact.hpp"
#include "proxy/proxy.hpp"

namespace px::cli {
namespace {

struct ProxyOptions {
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> allow;
  std::vector<std::uint16_t> ports;
  bool online = false;
  bool local_servers = false;
  std::string password_file;
  std::string log;
  std::size_t max_connections = 0;
  unsigned idle_timeout_s = 0;
};

int fail(const px::Error& e) {
  std::fprintf(stderr, "parallex proxy: %s\n", px::redact(e.message).c_str());
  return e.kind == px::ErrorKind::invalid_input ? 2 : 1;
}

// The password comes from a file, never from argv (world-readable in /proc).
// A missing file is created with a fresh password; without --password-file a
// private temporary file is made, its path printed, and removed at the end.
px::Result<std::string> obtain_password(std::string& path) {
  if (!path.empty()) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return px::proxy::read_password_file(path);
    PX_TRY_ASSIGN(auto pw, px::proxy::generate_password());
    PX_TRY(px::proxy::write_password_file(path, pw));
    return pw;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/parallex-proxy-XXXXXX";
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) return px::Error::io("create a password file in " + templ, errno);
  ::close(fd);  // mkstemp made it 0600 and empty
  ::unlink(templ.c_str());
  path = templ;
  PX_TRY_ASSIGN(auto pw, px::proxy::generate_password());
  PX_TRY(px::proxy::write_password_file(path, pw));
  return pw;
}

int run(const ProxyOptions& o) {
  using namespace px::proxy;
  const std::size_t colon = o.listen.rfind(':');
  if (colon == std::string::npos) {
    return fail(
        px::Error::invalid("--listen wants ADDRESS:PORT, such as 127.0.0.1:0, not '" + o.listen + "'."));
  }
  std::string host = o.listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  // 0 asks for a free port; any other port is read as every input reads one.
  const std::string port_text = o.listen.substr(colon + 1);
  const std::optional<std::uint16_t> port =
      port_text == "0" ? std::optional<std::uint16_t>(0) : px::parse_port(port_text);
  if (!port) {
    return fail(px::Error::invalid("--listen has a bad port '" + port_text +
                                   "'; give 0 (a free one) or 1 to 65535, without a leading zero."));
  }
  if (o.online && !o.allow.empty()) {
    return fail(px::Error::invalid("--online allows every host; drop --allow or drop --online."));
  }

  ProxyConfig config;
  config.mode = o.online ? NetworkMode::online : NetworkMode::allowlist;
  config.allowed_hosts = o.allow;
  if (!o.ports.empty()) config.allowed_ports = o.ports;
  config.local_servers = o.local_servers;
  config.log_path = o.log;
  if (o.max_connections > 0) config.limits.max_connections = o.max_connections;
  if (o.idle_timeout_s > 0) config.limits.idle_timeout = std::chrono::seconds(o.idle_timeout_s);
  std::string password_path = o.password_file;
  auto password = obtain_password(password_path);
  if (!password) return fail(password.error());
  config.password = std::move(password).value();
  // The password file this command made goes with it, on every way out (a
  // refused --allow included); one the user named stays.
  struct MadeFile {
    std::string path;
    ~MadeFile() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } made{o.password_file.empty() ? password_path : std::string()};

  // Block the stop signals before the server's threads start, so they inherit
  // the mask and only sigwait below sees SIGINT/SIGTERM.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = ProxyServer::listen(std::move(config), host, *port);
  if (!server) return fail(server.error());
  std::printf("%s\n", server.value()->listen_address().c_str());
  if (o.password_file.empty()) std::printf("password file: %s\n", password_path.c_str());
  std::fflush(stdout);
  if (o.allow.empty() && !o.online) {
    std::fprintf(stderr, "parallex proxy: no --allow and no --online: every host is refused%s.\n",
                 o.local_servers ? " except localhost" : "");
  }

  int sig = 0;
  sigwait(&stop_signals, &sig);
  server.value()->stop();
  std::vector<run::RefusedRequest> refused;
  for (const auto& h : server.value()->refused_hosts())
    refused.push_back({h.host, h.port, h.reason, h.count, h.dns});
  std::fputs(cli::format_refused(refused, o.log).c_str(), stderr);
  return 0;
}

Action setup_proxy(CLI::App& app, GlobalOptions& /*global*/) {
  auto o = std::make_shared<ProxyOptions>();
  app.add_option("--listen", o->listen, "ADDRESS:PORT to listen on; port 0 picks a free one")
      ->capture_default_str();
  app.add_option("--allow", o->allow,
                 "Allow HOST and its subdomains, HOST:PORT on that port only, \"*.HOST\" its subdomains only "
                 "(repeatable)");
  app.add_option("--allow-port", o->ports,
                 "Allow this upstream port for hosts given without one (repeatable; default 80 and 443)")
      ->check(port_number());
  app.add_flag("--online", o->online, "Allow every host (still logged)");
  app.add_flag("--local-servers", o->local_servers,
               "Forward CONNECT localhost:PORT to this machine and allow local addresses");
  app.add_option("--password-file", o->password_file,
                 "Read the proxy password from this file (0600), or create it with a new one");
  app.add_option("--log", o->log, "Append one JSON line per decision to this file");
  app.add_option("--max-connections", o->max_connections, "Cap on open client connections (default 512)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  app.add_option("--idle-timeout", o->idle_timeout_s, "Seconds before an idle tunnel is closed (default 600)")
      ->check(CLI::Range(1u, 7u * 24 * 3600));
  return [o] { return run(*o); };
}

}  // namespace

PARALLEX_COMMAND("proxy", "Run the network proxy on its own (host rules, password, log)", 60, setup_proxy);

}  // namespace px::cli
