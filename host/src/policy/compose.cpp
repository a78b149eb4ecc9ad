#include "policy/compose.hpp"

#include "common/paths.hpp"
#include "policy/compose_broker.hpp"
#include "policy/policy_builder.hpp"
#include "policy/tool_caches.hpp"
#include "policy/value_checks.hpp"

namespace px::policy {

namespace {

struct Placeholders {
  fs::path user_home, run_home, run_folder, temp;

  // Expands a profile path; `home` decides what '~' means for this entry.
  fs::path expand(const std::string& raw, const fs::path& home) const {
    auto replace_prefix = [&](const std::string& key, const fs::path& with) -> std::optional<fs::path> {
      if (raw.rfind(key, 0) != 0) return std::nullopt;
      std::string rest = raw.substr(key.size());
      if (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
      return rest.empty() ? with : with / rest;
    };
    if (auto p = replace_prefix("{run_folder}", run_folder)) return *p;
    if (auto p = replace_prefix("{run_home}", run_home)) return *p;
    if (auto p = replace_prefix("{temp}", temp)) return *p;
    return expand_home(raw, home);
  }
};

const char* shell_rc_files[] = {".bashrc", ".bash_profile", ".bash_login", ".profile",
                                ".zshrc",  ".zshenv",       ".zprofile",   ".config/fish/config.fish"};

void apply_profile(PolicyBuilder& b, const Profile& p, const Placeholders& ph,
                   const std::set<std::string>& secret) {
  auto origin = [&](int line) { return Origin::profile(p.name, line); };
  for (const auto& e : p.read)
    b.allow(ph.expand(e.value, ph.user_home), Access::read, e.reason, origin(e.line));
  for (const auto& e : p.write)
    b.allow(ph.expand(e.value, ph.user_home), Access::write, e.reason, origin(e.line));
  for (const auto& e : p.read_only) b.read_only(ph.expand(e.value, ph.user_home), e.reason, origin(e.line));
  for (const auto& e : p.dangerously_writable)
    b.dangerously_writable(ph.expand(e.value, ph.user_home), origin(e.line));
  for (const auto& e : p.deny) {
    // A secret path is denied under every home the run could read.
    b.deny(ph.expand(e.value, ph.user_home), e.reason, origin(e.line));
    if (ph.run_home != ph.user_home && (e.value == "~" || e.value.rfind("~/", 0) == 0))
      b.deny(ph.expand(e.value, ph.run_home), e.reason, origin(e.line));
  }
  if (p.forbid_new_git) b.forbid_new_git(*p.forbid_new_git, origin(p.forbid_new_git_line));
  if (p.processes) b.process_limit(*p.processes, origin(p.processes_line));
  if (p.network_mode) b.network(*p.network_mode, origin(p.network_mode_line));
  for (const auto& h : p.hosts) b.allow_host(h.value, origin(h.line));
  for (const auto& port : p.ports) b.allow_port(std::stoi(port.value), origin(port.line));
  if (p.local_servers) b.local_servers(*p.local_servers, origin(p.local_servers_line), p.local_server_ports);
  if (p.ask) b.ask(*p.ask, origin(p.ask_line));
  for (const auto& e : p.env_keep) b.keep_env(e.value, e.reason, origin(e.line));
  for (const auto& e : p.env_pass)
    b.pass_env(e.value, e.reason.empty() ? "passed on purpose by the profile" : e.reason, origin(e.line));
  for (const auto& e : p.env_strip) b.strip_env(e.value, e.reason, origin(e.line));
  for (const auto& s : p.env_set)
    b.set_env(s.name, s.value, "set by the profile", origin(s.line), secret.count(s.name) > 0);
  if (p.dangerously_allow_home) {
    b.allow_whole_home(true);
    b.weakening("dangerously_allow_home (" + origin(p.dangerously_allow_home_line).describe() + ")");
  }
}

// A harness plugin's contribution, each value through the check of its kind
// (value_checks.hpp, environment.hpp, the builder's for paths) before it
// becomes an entry; a refusal names the plugin, the callback, the value and
// the rule.
void apply_harness(PolicyBuilder& b, const HarnessContribution& h, const Placeholders& ph, bool agent_run) {
  const Origin origin = Origin::plugin(h.plugin);
  const auto refuse = [&](const char* what, const std::string& value, const std::string& rule) {
    b.fail(Error::policy(refused_from_plugin(h.plugin, "contribute", what, value, rule)));
    return false;
  };
  const auto text_ok = [&](const char* what, const std::string& value) {
    const std::string problem = check_text(value);
    return problem.empty() || refuse(what, value, problem);
  };
  const auto path_ok = [&](const char* what, const std::string& path) {
    if (const std::string problem = check_path_text(path); !problem.empty())
      return refuse(what, path, problem);
    if (path[0] != '/' && path != "~" && path.rfind("~/", 0) != 0)
      return refuse(what, path, "is neither absolute nor under '~/'");
    return true;
  };
  const auto env_ok = [&](const char* what, EnvRuleKind kind, const std::string& name) {
    const std::string problem = check_env_rule(kind, name, Origin::Kind::plugin);
    return problem.empty() || refuse(what, name, problem);
  };
  b.harness(h.plugin);
  using Kind = HarnessContribution::Path::Kind;
  for (const auto& p : h.paths) {
    if (!path_ok("path", p.path) || !text_ok("reason", p.reason)) continue;
    const fs::path path = ph.expand(p.path, ph.run_home);
    switch (p.kind) {
      case Kind::read:
        b.allow(path, Access::read, p.reason, origin);
        break;
      case Kind::read_write:
        b.allow(path, Access::write, p.reason, origin);
        break;
      case Kind::executable_dir:
        b.allow(path, Access::read, p.reason, origin);
        break;
      case Kind::state_dir:
        b.allow_state_dir(path, p.reason, origin);
        break;
      case Kind::state_file:
        b.allow_state_file(path, p.reason, origin);
        break;
      case Kind::read_only:
        // Never widens a run; kept to the harness's own files in the home.
        if (!is_within(normal_absolute(path), ph.run_home))
          refuse("read-only path", p.path,
                 "is not in the run's home; a plugin keeps read-only the files of its "
                 "harness there (the project's are project_files)");
        else
          b.read_only(path, p.reason, origin);
        break;
    }
  }
  for (const auto& e : h.env) {
    if (!text_ok("reason", e.reason)) continue;
    switch (e.action) {
      case HarnessContribution::Env::Action::keep:
        b.keep_env(e.name, e.reason, origin);
        break;
      case HarnessContribution::Env::Action::strip:
        b.strip_env(e.name, e.reason, origin);
        break;
      case HarnessContribution::Env::Action::set:
        if (text_ok("value", e.value)) b.set_env(e.name, e.value, e.reason, origin);
        break;
    }
  }
  // Config dirs relocate the harness into an agent's home. In an ad-hoc run the
  // home is the user's own, so only the plugin's narrow carve-outs apply.
  for (const auto& c : h.config_dirs) {
    if (!env_ok("config dir variable", EnvRuleKind::set, c.variable) || !path_ok("config dir", c.path) ||
        !text_ok("reason", c.reason))
      continue;
    if (c.path.rfind("~/", 0) != 0) {
      refuse("config dir", c.path, "is not under '~/'");
      continue;
    }
    if (!agent_run) continue;
    const fs::path dir = ph.expand(c.path, ph.run_home);
    b.set_env(c.variable, dir.string(), c.reason, origin);
    b.allow(dir, Access::write, c.reason, origin);
  }
  for (const auto& n : h.nested) {
    // A variable of these is set into the run as it starts: checked as a set.
    if (n.kind == NestedSandboxSwitch::Kind::env &&
        !env_ok("nested-sandbox variable", EnvRuleKind::set, n.name))
      continue;
    if (!text_ok(n.kind == NestedSandboxSwitch::Kind::env ? "value" : "argument", n.value) ||
        !text_ok("reason", n.reason))
      continue;
    b.nested_sandbox({n.kind, n.name, n.value, n.reason, origin});
  }
  for (const auto& s : h.suggested_hosts) {
    if (!text_ok("reason", s.reason)) continue;
    if (const std::string problem = check_host_pattern(normalize_host(s.host)); !problem.empty()) {
      refuse("suggested host", s.host, "is not a host name (" + problem + ")");
      continue;
    }
    b.suggested_host(s.host, s.reason, origin);
  }
  for (const auto& c : h.credentials) {
    env_ok("brokered variable", EnvRuleKind::set, c.variable);
    if (!c.base_url_variable.empty()) env_ok("base URL variable", EnvRuleKind::set, c.base_url_variable);
    for (const auto& host : c.hosts) text_ok("brokered host", host);
    text_ok("shape", c.shape);
    text_ok("reason", c.reason);
  }
}

// The files a harness runs or trusts in a project (every loaded plugin's):
// read-only in every run. Not `.git` or Parallex's own files (git's and
// Parallex's doors, kept by their own rules), nor what a profile already
// keeps: one plugin's list applies to the runs of every harness, and a
// `.git` there would fail every commit.
Status apply_project_files(PolicyBuilder& b, const ComposeInputs& in, const Placeholders& ph,
                           std::vector<std::string>* notes) {
  const std::vector<ProjectFiles>& sets = in.project_files;
  const std::vector<Profile>& profiles = in.profiles;
  for (const auto& set : sets) {
    for (const auto& f : set.files) {
      const fs::path path = ph.run_folder / f.path;
      std::string rule;
      for (const char* own : {".git", ".parallex"})
        if (is_within(path, ph.run_folder / own))
          rule = std::string("is ") + (own[1] == 'g' ? "git's" : "Parallex's") + " own (" + own +
                 "), kept by rules of its own";
      for (const auto& p : profiles)
        for (const auto* list : {&p.read_only, &p.deny})
          for (const auto& e : *list) {
            const fs::path managed = ph.expand(e.value, ph.user_home);
            if (rule.empty() && managed != ph.run_folder && is_within(path, managed))
              rule = "the profile " + p.name + " already keeps (" + e.value + ")";
          }
      if (!rule.empty()) {
        const std::string refusal =
            refused_from_plugin(set.plugin, "project_files", "project file", f.path, rule);
        if (in.harness && in.harness->plugin == set.plugin) return Error::plugin(refusal);
        if (notes) notes->push_back(refusal + " (left out of this run)");
        continue;
      }
      b.read_only(path, set.harness + " runs or trusts it: " + f.reason, Origin::plugin(set.plugin));
    }
  }
  return ok();
}

// The run's tool caches (policy/tool_caches.hpp), from the last profile that
// says where: only for a run in the user's own home (an agent's tools keep
// theirs in its own home).
Status apply_tool_caches_setting(PolicyBuilder& b, const std::vector<Profile>& profiles,
                                 const Placeholders& ph, Platform platform, bool agent_run) {
  const Profile* from = nullptr;
  for (const auto& p : profiles)
    if (p.tool_caches) from = &p;
  if (!from || agent_run || from->tool_caches->value == "off") return ok();
  const Origin origin = Origin::profile(from->name, from->tool_caches->line);
  const std::string& value = from->tool_caches->value;
  const bool per_run = value == "per_run" || value == "overlay";
  const fs::path on_host = per_run ? ph.temp / "tool-caches" : ph.expand(value, ph.user_home);
  const bool in_temp = !ph.temp.empty() && is_within(on_host, ph.temp);
  fs::path inside = on_host;
  if (in_temp && platform == Platform::linux_host) {
    // Inside the Linux seal the run's temp dir is /tmp.
    const std::string rest = on_host.string().substr(ph.temp.string().size());
    inside = fs::path("/tmp" + rest);
  }
  // The layers are mounts of the Linux seal; Seatbelt has none (per_run there).
  const bool layered = value == "overlay" && platform == Platform::linux_host;
  return apply_tool_caches(b, on_host, inside, in_temp, layered, ph.user_home, origin);
}

}  // namespace

Status apply_env_flag(PolicyBuilder& b, const std::string& spec, const Origin& origin) {
  const auto eq = spec.find('=');
  const std::string name = spec.substr(0, eq);
  if (auto problem = check_env_name(name); !problem.empty())
    return Error::invalid(origin.describe() + " " + spec.substr(0, 80) + ": " + problem +
                          "; write --env NAME (taken from your environment) or --env NAME=VALUE");
  if (eq == std::string::npos)
    b.pass_env(name, "passed on purpose, from the caller's environment", origin);
  else
    b.set_env(name, spec.substr(eq + 1), kSetOnPurpose, origin, /*secret=*/true);
  return ok();
}

Status check_network_flags(const NetworkFlags& f) {
  if (f.online && f.offline)
    return Error::invalid("--online and --offline contradict each other: choose one");
  if (f.offline && !f.allow.empty())
    return Error::invalid("--offline and --allow " + f.allow.front() + " contradict each other: choose one");
  if (f.online && !f.allow.empty())
    return Error::invalid("--online already allows every host; drop --allow " + f.allow.front() +
                          " or drop --online");
  if (f.offline && f.local_servers.value_or(false))
    return Error::invalid("--offline turns off the network, Local servers included; drop --local-servers");
  return ok();
}

Result<Policy> compose(const ComposeInputs& in, std::vector<std::string>* notes) {
  PX_TRY(check_network_flags(in.network));
  const bool agent_run = in.agent.has_value();
  Placeholders ph{normal_absolute(in.user_home),
                  agent_run ? normal_absolute(in.agent->home) : normal_absolute(in.user_home),
                  normal_absolute(in.run_folder), normal_absolute(in.temp_dir)};

  PolicyBuilder b;
  b.platform(in.platform);
  b.run_folder(ph.run_folder).user_home(ph.user_home).run_home(ph.run_home).temp_dir(ph.temp);
  b.set_env("HOME", ph.run_home.string(), "the run's home", Origin::builtin());
  b.set_env("TMPDIR", in.platform == Platform::linux_host ? "/tmp" : ph.temp.string(),
            "the run's private temp dir", Origin::builtin());
  b.set_env("PARALLEX_RUN", "1", "tells programs (and parallex itself) they run inside a seal",
            Origin::builtin());

  for (const auto& p : in.profiles) {
    apply_profile(b, p, ph, in.secret_env);
    // What the next run is allowed is no business of this one.
    if (!p.source_file.empty())
      b.read_only(p.source_file,
                  "the profile this run loads: a run may not change what the runs after it may do",
                  Origin::profile(p.name, 0));
  }
  PX_TRY(apply_tool_caches_setting(b, in.profiles, ph, in.platform, agent_run));
  // Files other programs run later: read-only in every run, whatever its
  // harness (an agent run under Codex must not plant Claude Code's hooks).
  PX_TRY(apply_project_files(b, in, ph, notes));
  for (const auto& f : in.git_files)
    b.read_only(f,
                "git would run a program it names, or act on a folder it names (a submodule's or worktree's "
                "config, hooks, commondir, gitdir)",
                Origin::builtin("git"));
  // Parallex's own files in a project (docs/workspaces.md): its config chooses
  // the seal and the network of the project's later workspaced runs, state/
  // records what each workspace was made from, and the token is the
  // supervisor's to hold. A run that could write the config could turn the
  // seal off for the runs after it.
  const Origin project_files = Origin::builtin("Parallex's project files");
  b.read_only(
      ph.run_folder / ".parallex/config.yaml",
      "Parallex's project config: it chooses the seal and the network of this project's workspaced runs",
      project_files);
  b.read_only(ph.run_folder / ".parallex/state", "Parallex's record of what each workspace was made from",
              project_files);
  b.deny(ph.run_folder / ".parallex/github-token",
         "the project's GitHub token: the supervisor holds it, a run never reads it", project_files);
  if (in.own_state) {
    PX_TRY(check_run_folder_outside_own_state(ph.run_folder, *in.own_state));
    deny_own_state(b, *in.own_state);
  }

  if (agent_run) {
    const Origin origin = Origin::agent(in.agent->name);
    b.allow(ph.run_home, Access::write, "the agent's own home", origin);
    for (const char* rc : shell_rc_files)
      b.read_only(ph.run_home / rc, "shell start-up files run as you: a run may not change them", origin);
    for (const auto& ro : in.agent->read_only)
      b.read_only(ro, "the agent's keys and token: readable, never writable", origin);
    for (const auto& g : in.agent->grants) b.allow(g.path, g.access, "granted to the agent", origin);
    if (in.agent->network_mode) b.network(*in.agent->network_mode, origin);
    for (const auto& h : in.agent->allow) b.allow_host(h, origin);
    if (in.agent->local_servers)
      b.local_servers(*in.agent->local_servers, origin, in.agent->local_server_ports);
    if (in.agent->ask) b.ask(*in.agent->ask, origin);
    if (in.agent->processes) b.process_limit(*in.agent->processes, origin);
    for (const auto& [name, value] : in.agent->env)
      b.set_env(name, value, "the agent's own identity", origin, in.agent->secret_env.count(name) > 0);
    for (const auto& spec : in.agent->passed_env) PX_TRY(apply_env_flag(b, spec, origin));
  }

  if (in.harness) apply_harness(b, *in.harness, ph, agent_run);
  // In an agent's run its home is its own (checked before an unsealed run
  // instead, agents/run_inputs.hpp), but for its scratch folders: another
  // session of the agent (an unsealed one, beside or next) runs what is there,
  // so each sealed run gets its own there too, and they hold only what
  // unsealed sessions wrote.
  if (in.harness_home_files) {
    for (auto& f :
         resolve_home_files(*in.harness_home_files, agent_run ? ph.run_home : ph.user_home, ph.run_folder)) {
      if (agent_run && f.kind != HomeKind::scratch) continue;
      // Seatbelt has no copies of the run's own: a setting or a scratch
      // folder stays read-only there (a data file with keys that run
      // commands stays the harness's to write: docs/seatbelt.md).
      if (in.platform == Platform::macos && f.kind != HomeKind::data)
        b.read_only(f.path, in.harness_home_files->harness + " runs what it says: " + f.reason, f.origin);
      b.home_file(std::move(f));
    }
  }

  if (!in.parallex_executable.empty())
    b.allow(in.parallex_executable, Access::read,
            "parallex itself: its MCP server (parallex mcp) and an agent's git credential helper run inside",
            Origin::builtin("parallex"));
  if (!in.opener_dir.empty())
    b.allow(in.opener_dir, Access::read,
            "the run's opener: a page the run asks to open (its BROWSER, xdg-open) is shown to you, never "
            "opened",
            Origin::builtin("parallex"));
  for (const auto& g : in.grants)
    b.allow(normal_absolute(g.path), g.access, "granted on the command line", Origin::flag(g.flag));
  const auto& net = in.network;
  if (net.online) b.network(NetworkMode::online, Origin::flag("--online"));
  if (net.offline) b.network(NetworkMode::offline, Origin::flag("--offline"));
  if (!net.allow.empty()) b.network(NetworkMode::allowlist, Origin::flag("--allow"));
  for (const auto& h : net.allow) b.allow_host(h, Origin::flag("--allow"));
  if (net.local_servers)
    b.local_servers(*net.local_servers, Origin::flag("--local-servers"), net.local_server_ports);
  for (const auto& p : net.publish) b.publish(p, Origin::flag("--publish"));
  if (net.ask) b.ask(*net.ask, Origin::flag("--ask"));
  // --local-servers with no mode flag adds this machine's servers to what the
  // run may reach. Where that was nothing (an offline agent or profile), it
  // means this machine's servers only: an allowlist of no host, as a plain
  // `run --local-servers` gets from the default profile. (--offline with it
  // is refused above.)
  if (net.local_servers.value_or(false) && !net.online && !net.offline && net.allow.empty() &&
      b.network_mode() == NetworkMode::offline)
    b.network(NetworkMode::allowlist, Origin::flag("--local-servers"));
  for (const auto& spec : in.env_flags) PX_TRY(apply_env_flag(b, spec, Origin::flag("--env")));
  for (const auto& path : in.dangerously_writable)
    b.dangerously_writable(normal_absolute(path), Origin::flag("--dangerously-writable"));
  apply_broker(b, in, ph.user_home);
  return b.build();
}

}  // namespace px::policy
