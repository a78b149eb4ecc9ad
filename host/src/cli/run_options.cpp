#include "cli/run_options.hpp"

#include <cstdio>

#include "cli/output.hpp"

namespace px::cli {

namespace {

// `--in ""` must not mean "the current folder", nor `--grant ""` nothing at
// all: an empty value is refused, naming the option.
const CLI::Validator kNotEmpty(
    [](std::string& value) {
      return value.empty() ? std::string("an empty value names nothing") : std::string();
    },
    "", "NOT EMPTY");

}  // namespace

void add_run_options(CLI::App& app, run::RunOptions& o, RunOptionSet set, std::vector<std::string>* command) {
  app.add_option("--harness", o.harness, "The harness plugin to use (default: detected from the command)")
      ->check(kNotEmpty);
  app.add_option("--profile", o.profile,
                 "A profile name (default, offline, developer) or a YAML file, over the default")
      ->check(kNotEmpty);
  if (set != RunOptionSet::workspace)
    app.add_option("--in", o.in, "The folder the run works in (default: the current directory)")
        ->check(kNotEmpty);
  // One value per flag (repeat the flag for more), so `--` always ends the options.
  app.add_option("--grant", o.grants, "Grant PATH read-only (PATH or PATH:ro) or read-write (PATH:rw)")
      ->check(kNotEmpty)
      ->allow_extra_args(false);
  app.add_flag("--online", o.online, "Allow every host (through the run's proxy, logged)");
  app.add_flag("--offline", o.offline, "No network at all");
  app.add_option(
         "--allow", o.allow,
         "Allow HOST and its subdomains on ports 80 and 443, HOST:PORT on that port only, \"*.HOST\" for "
         "its subdomains only (every connection through the run's proxy)")
      ->check(kNotEmpty)
      ->allow_extra_args(false);
  // A flag with an optional `=VALUE`: it never takes the next word, so `--`
  // and the command stay where they are.
  app.add_flag(
      "--local-servers{every}", o.local_servers,
      "Let the run reach servers on this machine's loopback (localhost, 127.0.0.1, [::1]): every port, "
      "or only --local-servers=3000,5432; --local-servers=off turns it off for this run");
  app.add_flag("--ask{on}", o.ask,
               "Hold a connection outside the network rule and ask you (parallex approve / deny, from "
               "another terminal) instead of refusing it: --ask (up to 120 s), --ask=SECONDS, --ask=off");
  app.add_option(
         "--env", o.env,
         "Pass a variable on purpose: NAME (its value from your environment) or NAME=VALUE; the run's "
         "record names it, never its value")
      ->check(kNotEmpty)
      ->allow_extra_args(false);
  app.add_option("--dangerously-writable", o.dangerously_writable,
                 "Let the run write PATH though other programs run or trust it later (.vscode, .envrc, a "
                 "harness's hooks); said as a weakening and kept in the run's record")
      ->check(kNotEmpty)
      ->allow_extra_args(false);
  app.add_flag("--allow-system-folder", o.allow_system_folder,
               "Let the run work in a system folder (/etc, /usr, /var, /opt, /srv, ...), whose files the "
               "system or a login runs outside any seal");
  app.add_option("--publish", o.publish,
                 "Publish the run's server on PORT to this machine's 127.0.0.1 (PORT or PORT:HOSTPORT)")
      ->check(kNotEmpty)
      ->allow_extra_args(false);
  if (set != RunOptionSet::policy) {
    app.add_flag("--unsealed", o.unsealed, "Run without the seal (it can then read and write what you can)");
    // The environment variable is the one-time choice a container image makes
    // (ENV in its Containerfile, env: in a pod), not a flag on every command.
    app.add_flag("--allow-weaker-seal", o.allow_weaker_seal,
                 "Run even when this kernel cannot give every guarantee of the seal (see `parallex check`)")
        ->envname("PARALLEX_ALLOW_WEAKER_SEAL");
    // The spelling `agent run` used to have: still accepted, said to be old.
    app.add_flag_callback(
           "--accept-weaker-seal",
           [&o] {
             o.allow_weaker_seal = true;
             say("--accept-weaker-seal is now --allow-weaker-seal (the old name still works for now)");
           },
           "")
        ->group("");
  }
  if (command) app.add_option("command", *command, "The command to run, after --");
}

}  // namespace px::cli
