#include "cli/policy_options.hpp"

#include <cstdlib>

#include "common/paths.hpp"

namespace px::cli {

void add_policy_options(CLI::App& app, PolicyOptions& o, bool with_command) {
  app.add_option("--harness", o.harness, "The harness plugin to use (default: detected from the command)");
  app.add_option("--profile", o.profile, "A profile name (default, offline, developer) or a YAML file, over the default");
  app.add_option("--in", o.in, "The folder the run works in (default: the current directory)");
  // One value per flag (repeat the flag for more), so `--` always ends the options.
  app.add_option("--grant", o.grants, "Grant PATH read-only (PATH or PATH:ro) or read-write (PATH:rw)")
      ->allow_extra_args(false);
  app.add_flag("--online", o.online, "Allow every host (through the run's proxy, logged)");
  app.add_flag("--offline", o.offline, "No network at all");
  app.add_option(
         "--allow", o.allow,
         "Allow HOST and its subdomains on ports 80 and 443, HOST:PORT on that port only, \"*.HOST\" for "
         "its subdomains only (every connection through the run's proxy)")
      ->allow_extra_args(false);
  app.add_flag("--local-servers", o.local_servers,
               "Let the run reach servers listening on this machine's loopback (as localhost:PORT)");
  app.add_option("--publish", o.publish,
                 "Publish the run's server on PORT to this machine's 127.0.0.1 (PORT or PORT:HOSTPORT)")
      ->allow_extra_args(false);
  if (with_command) app.add_option("command", o.command, "The command to run, after --");
}

Result<policy::PathFlag> parse_grant(const std::string& text, std::vector<std::string>& notes) {
  policy::PathFlag flag;
  std::string path = text;
  flag.access = policy::Access::read;
  if (text.size() > 3 && (text.ends_with(":ro") || text.ends_with(":rw"))) {
    flag.access = text.ends_with(":rw") ? policy::Access::write : policy::Access::read;
    path = text.substr(0, text.size() - 3);
  }
  flag.flag = "--grant " + text;
  const fs::path given = normal_absolute(expand_home(path, user_home()));
  std::error_code ec;
  if (!fs::exists(given, ec))
    return Error::invalid("--grant " + text + ": " + given.string() + " does not exist; create it or fix the path");
  fs::path real = fs::canonical(given, ec);
  if (ec) return Error::io("--grant " + text + ": cannot resolve " + given.string(), ec.value());
  if (real != given) notes.push_back("granted " + given.string() + " as " + real.string() + " (it is a symlink)");
  flag.path = real;
  return flag;
}

Result<PreparedPolicy> prepare_policy(const PolicyOptions& o, PrepareContext context) {
  std::vector<std::string> notes;
  policy::NetworkFlags net{o.online, o.offline, o.allow, std::nullopt, o.publish};
  if (o.local_servers) net.local_servers = true;
  PX_TRY(policy::check_network_flags(net));

  fs::path run_folder = o.in.empty() ? fs::current_path() : normal_absolute(expand_home(o.in, user_home()));
  std::error_code ec;
  if (!fs::is_directory(run_folder, ec))
    return Error::invalid("--in " + o.in + ": " + run_folder.string() +
                          " is not a directory; give the folder the run should work in");
  run_folder = fs::canonical(run_folder, ec);

  std::vector<policy::PathFlag> grants;
  for (const auto& g : o.grants) {
    PX_TRY_ASSIGN(auto flag, parse_grant(g, notes));
    grants.push_back(std::move(flag));
  }

  auto plugins = context.plugins ? context.plugins : std::make_shared<plugins::PluginSet>(plugins::PluginSet::load_default());
  const char* path_env = std::getenv("PATH");
  plugins::CommandLine command = plugins::make_command_line(o.command, path_env ? path_env : "");
  PX_TRY_ASSIGN(auto choice, plugins::choose_harness(*plugins, o.harness, o.command.empty() ? nullptr : &command));

  policy::ComposeInputs in;
  in.platform = context.platform;
  in.user_home = user_home();
  in.run_folder = run_folder;
  in.temp_dir = context.temp_dir;
  PX_TRY_ASSIGN(auto base, policy::load_profile("default"));
  in.profiles.push_back(std::move(base));
  if (o.profile && *o.profile != "default") {
    PX_TRY_ASSIGN(auto extra, policy::load_profile(*o.profile));
    in.profiles.push_back(std::move(extra));
  }
  for (auto& extra : context.extra_profiles) in.profiles.push_back(std::move(extra));
  in.agent = context.agent;
  const fs::path run_home = in.agent ? in.agent->home : in.user_home;
  if (choice.plugin) {
    PX_TRY_ASSIGN(auto contribution, choice.plugin->contribute(context.platform, in.user_home, run_home, run_folder,
                                                              o.command.empty() ? nullptr : &command));
    in.harness = std::move(contribution);
  }
  in.grants = std::move(grants);
  in.network = std::move(net);
  in.secret_env = context.secret_env;
  PX_TRY_ASSIGN(auto composed, policy::compose(in));
  return PreparedPolicy{std::move(plugins), choice, std::move(command), std::move(composed), std::move(notes)};
}

}  // namespace px::cli
