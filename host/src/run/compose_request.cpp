#include "run/compose_request.hpp"

#include <algorithm>
#include <cstdlib>

#include "common/paths.hpp"
#include "policy/ask.hpp"
#include "policy/local_servers.hpp"
#include "run/env_paths.hpp"
#include "run/git_paths.hpp"
#include "run/profile_trust.hpp"
#include "run/run_folder.hpp"

namespace px::run {

Result<policy::PathFlag> parse_grant(const std::string& text, std::vector<Notice>& notices) {
  policy::PathFlag flag;
  std::string path = text;
  flag.access = policy::Access::read;
  if (text.size() > 3 && (text.ends_with(":ro") || text.ends_with(":rw"))) {
    flag.access = text.ends_with(":rw") ? policy::Access::write : policy::Access::read;
    path = text.substr(0, text.size() - 3);
  }
  flag.flag = "--grant " + text;
  if (path.empty())
    return Error::invalid("--grant needs a path: --grant PATH (read-only) or --grant PATH:rw");
  const fs::path given = normal_absolute(expand_home(path, user_home()));
  std::error_code ec;
  if (!fs::exists(given, ec)) {
    // `/etc:rx`: a mode that is neither ro nor rw, not a path with a colon.
    const auto colon = text.rfind(':');
    if (colon != std::string::npos && colon + 1 < text.size() && text.size() - colon <= 4 &&
        fs::exists(normal_absolute(expand_home(text.substr(0, colon), user_home())), ec))
      return Error::invalid("--grant " + text +
                            ": the access after ':' is ro (read) or rw (read and write), not '" +
                            text.substr(colon + 1) + "'");
    return Error::invalid("--grant " + text + ": " + given.string() +
                          " does not exist; create it or fix the path");
  }
  const fs::path real = fs::canonical(given, ec);
  if (ec) return Error::io("--grant " + text + ": cannot resolve " + given.string(), ec.value());
  const fs::path home = normal_absolute(user_home());
  // Read-only, the whole home is the user's choice (its secret paths stay
  // denied); writable, every start-up file and project of theirs would be the run's.
  if (flag.access == policy::Access::write && !home.empty() && is_within(home, real))
    return Error::policy(
        "--grant " + text + " makes all of your home " + home.string() +
        " writable (your shell's start-up files, your other projects); grant the folders the run "
        "needs (--grant " +
        (home / "src/lib").string() +
        ":rw), or list the home in a profile of your own with "
        "dangerously_allow_home: true");
  if (real != given)
    notices.push_back(
        {NoticeKind::seal, "granted " + given.string() + " as " + real.string() + " (it is a symlink)"});
  flag.path = real;
  return flag;
}

namespace {

// Parallex's own folders are denied to every run; where a path the run keeps
// lies inside one (an agent's home, the run's temp dir) it is denied entry by
// entry, and the folder itself stays as the grants make it. A writable grant
// of it, or of a path in it, would then let the run add entries there
// (plugins/, profiles) that the next `parallex` reads outside any seal:
// refused, whichever rule made the grant. (A grant of a folder that holds it
// is not refused: docs/linux-seal.md says what that still leaves open.)
Status check_no_writable_own_state(const policy::Policy& composed, const policy::ComposeInputs& in) {
  if (!in.own_state) return ok();
  std::vector<fs::path> kept;
  for (const auto& k : in.own_state->keep) kept.push_back(normal_absolute(k));
  const auto is_kept = [&](const fs::path& p) {
    return std::any_of(kept.begin(), kept.end(), [&](const fs::path& k) { return is_within(p, k); });
  };
  for (const auto& raw : in.own_state->roots) {
    const fs::path root = normal_absolute(raw);
    if (std::none_of(kept.begin(), kept.end(), [&](const fs::path& k) { return is_within(k, root); }))
      continue;  // denied as a whole: nothing can be added to it
    for (const auto& g : composed.grants()) {
      if (g.access != policy::Access::write || is_kept(g.path)) continue;
      if (is_within(g.path, root))
        return Error::policy(g.origin.describe() + " makes " + g.path.string() + " writable, and " +
                             (g.path == root ? "it is" : "it lies in") + " Parallex's own state " +
                             root.string() +
                             ": the run could add files there that the next parallex reads outside any seal. "
                             "Grant the folders you need beside it instead.");
    }
  }
  return ok();
}

}  // namespace

Result<ComposedPolicy> compose_policy(const ComposeRequest& r) {
  const RunOptions& o = r.options;
  std::vector<Notice> notices;
  policy::NetworkFlags net{o.online, o.offline, o.allow, std::nullopt, {}, o.publish, std::nullopt};
  if (!o.local_servers.empty()) {
    PX_TRY_ASSIGN(auto local, policy::parse_local_servers(o.local_servers == "every" ? "" : o.local_servers,
                                                          "--local-servers=" + o.local_servers));
    net.local_servers = local.on;
    net.local_server_ports = local.ports;
  }
  if (!o.ask.empty()) {
    PX_TRY_ASSIGN(auto seconds, policy::parse_ask(o.ask, "--ask=" + o.ask));
    net.ask = seconds;
  }
  PX_TRY(policy::check_network_flags(net));

  fs::path run_folder = o.in.empty() ? fs::current_path() : normal_absolute(expand_home(o.in, user_home()));
  std::error_code ec;
  if (!fs::is_directory(run_folder, ec))
    return Error::invalid("--in " + o.in + ": " + run_folder.string() +
                          " is not a directory; give the folder the run should work in");
  run_folder = fs::canonical(run_folder, ec);
  // The run may write its folder: the home itself (or above it) would be all
  // of the user's files. Said in the words of the mistake, with the fix.
  if (const fs::path home = normal_absolute(user_home()); !home.empty() && is_within(home, run_folder))
    return Error::policy(
        "the run would work in " + run_folder.string() +
        (run_folder == home ? ", your home folder" : ", which holds your home folder") +
        ", and may write the folder it works in: `cd` into a project first, or give one with --in DIR");
  PX_TRY(check_run_folder_place(run_folder, user_home(), o.allow_system_folder, notices));
  for (auto& n : run_folder_startup_files(run_folder)) notices.push_back(std::move(n));

  std::vector<policy::PathFlag> grants;
  for (const auto& g : o.grants) {
    PX_TRY_ASSIGN(auto flag, parse_grant(g, notices));
    grants.push_back(std::move(flag));
  }

  auto plugins =
      r.plugins ? r.plugins : std::make_shared<pluginhost::PluginSet>(pluginhost::PluginSet::load_default());
  // An executable copied where its plugins are not would run every harness
  // with no protection of its own, silently: said once per run.
  if (const std::string none = plugins->none_found(); !none.empty())
    notices.push_back({NoticeKind::alert, none});
  const char* path_env = std::getenv("PATH");
  pluginhost::CommandLine command = pluginhost::make_command_line(r.command, path_env ? path_env : "");
  PX_TRY_ASSIGN(auto choice,
                pluginhost::choose_harness(*plugins, o.harness, r.command.empty() ? nullptr : &command));

  policy::ComposeInputs in;
  in.platform = r.platform;
  in.user_home = user_home();
  in.run_folder = run_folder;
  in.temp_dir = r.temp_dir;
  in.opener_dir = r.opener_dir;
  PX_TRY_ASSIGN(auto base, policy::load_profile("default"));
  in.profiles.push_back(std::move(base));
  if (o.profile && *o.profile != "default") {
    PX_TRY_ASSIGN(auto extra, policy::load_profile(*o.profile));
    in.profiles.push_back(std::move(extra));
  }
  for (const auto& extra : r.extra_profiles) in.profiles.push_back(extra);
  in.agent = r.agent;
  const fs::path run_home = in.agent ? in.agent->home : in.user_home;
  if (choice.plugin) {
    PX_TRY_ASSIGN(auto contribution, choice.plugin->contribute(r.platform, in.user_home, run_home, run_folder,
                                                               r.command.empty() ? nullptr : &command));
    in.harness = std::move(contribution);
    PX_TRY_ASSIGN(auto home_files, choice.plugin->home_files(r.platform));
    if (!home_files.files.empty()) in.harness_home_files = std::move(home_files);
  }
  in.grants = grants;
  in.parallex_executable = parallex_executable();
  in.network = std::move(net);
  in.secret_env = r.secret_env;
  in.env_flags = o.env;
  // `--env NAME` takes its value from this environment: said when there is none.
  for (const auto& spec : o.env)
    if (spec.find('=') == std::string::npos && std::getenv(spec.c_str()) == nullptr)
      notices.push_back(
          {NoticeKind::environment, "--env " + spec + ": " + spec +
                                        " is not set in your environment, so the run does not get it "
                                        "(give --env " +
                                        spec + "=VALUE to set it)"});
  in.git_files = existing_git_files(run_folder);
  for (const auto& w : o.dangerously_writable) {
    const fs::path given = expand_home(w, user_home());
    in.dangerously_writable.push_back(given.is_absolute() ? given : run_folder / given);
  }
  // Every loaded plugin's project files, whatever the run's harness. The
  // harness's own are part of its run; another plugin's failure leaves its
  // files out of this run, said, and does not stop it.
  for (const auto& plugin : plugins->plugins()) {
    if (plugin->broken() && plugin.get() != choice.plugin) continue;  // said below
    auto files = plugin->project_files();
    if (!files && plugin.get() == choice.plugin) return files.error();
    if (!files) {
      if (!plugin->broken())
        notices.push_back(
            {NoticeKind::alert, files.error().message + " (its project files are left out of this run)"});
      continue;
    }
    if (!files.value().files.empty()) in.project_files.push_back(std::move(files).value());
  }
  if (r.deny_own_state) {
    policy::OwnState own{policy::own_state_roots(), {r.temp_dir, parallex_scratch_dir()}};
    if (in.agent) {
      own.keep.push_back(in.agent->home);
      for (const auto& p : in.agent->read_only) own.keep.push_back(p);
      for (const auto& g : in.agent->grants) own.keep.push_back(g.path);
    }
    in.own_state = std::move(own);
  }
  in.default_credentials = r.default_credentials;
  std::vector<std::string> left_out;
  PX_TRY_ASSIGN(auto composed, policy::compose(in, &left_out));
  if (in.own_state) PX_TRY(policy::make_own_state_roots(*in.own_state, composed));
  for (auto& note : left_out) notices.push_back({NoticeKind::alert, std::move(note)});
  // What went wrong with a plugin, said by every command that composes a
  // policy (run, policy show): one that failed to load, crashed or hung.
  for (const auto& problem : choice.problems) notices.push_back({NoticeKind::alert, problem});
  for (const auto& problem : plugins->problems()) notices.push_back({NoticeKind::alert, problem});
  PX_TRY(check_profile_files(in.profiles, composed, notices));
  // A grant a deny (or a read-only path) wins over is said, not dropped
  // silently; so is one inside Parallex's own state, which no run reaches
  // (denied entry by entry where a path the run keeps lies inside it).
  const auto in_own_state = [&](const fs::path& p) {
    if (!in.own_state) return false;
    for (const auto& k : in.own_state->keep)
      if (is_within(p, normal_absolute(k))) return false;
    for (const auto& root : in.own_state->roots)
      if (is_within(p, normal_absolute(root))) return true;
    return false;
  };
  PX_TRY(check_no_writable_own_state(composed, in));
  for (const auto& g : grants) {
    const bool write = g.access == policy::Access::write;
    auto decided = write ? composed.explain_write(g.path) : composed.explain_read(g.path);
    if (decided.allowed && in_own_state(g.path))
      decided = {false, "Parallex's own state (built in: never reachable from a run)"};
    if (decided.allowed) continue;
    const bool readable = write && composed.may_read(g.path) && !in_own_state(g.path);
    notices.push_back({NoticeKind::seal, g.flag + ": " + g.path.string() + " stays " +
                                             (readable ? "read-only"
                                              : write  ? "out of reach"
                                                       : "unreadable") +
                                             " in the run; " + decided.rule + " wins over a grant"});
  }
  std::vector<std::string> passed = o.env;
  if (r.agent) passed.insert(passed.end(), r.agent->passed_env.begin(), r.agent->passed_env.end());
  say_unreadable_env_paths(passed, composed, notices);
  return ComposedPolicy{std::move(plugins), choice, std::move(command), std::move(composed),
                        std::move(notices)};
}

}  // namespace px::run
