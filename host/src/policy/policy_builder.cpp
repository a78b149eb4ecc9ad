#include "policy/policy_builder.hpp"

#include <algorithm>

#include "common/host_rule.hpp"
#include "common/paths.hpp"
#include "common/port.hpp"
#include "common/shown.hpp"
#include "policy/value_checks.hpp"

namespace px::policy {

namespace {

// The one check of an environment rule (environment.hpp), said in the words
// of its source.
std::optional<Error> env_refusal(EnvRuleKind kind, const std::string& text, const Origin& origin) {
  const std::string problem = check_env_rule(kind, text, origin.kind);
  if (problem.empty()) return std::nullopt;
  const char* what =
      kind == EnvRuleKind::keep || kind == EnvRuleKind::strip ? "variable pattern" : "variable";
  if (origin.kind == Origin::Kind::plugin)
    return Error::policy(refused_from_plugin(origin.source, "contribute", what, text, problem));
  return Error::invalid("the environment rule " + std::string(what) + " \"" + shown(text.substr(0, 200)) +
                        "\" from " + origin.describe() + " " + problem);
}

}  // namespace

PolicyBuilder& PolicyBuilder::fail(Error error) {
  if (!error_) error_ = std::move(error);
  return *this;
}

std::optional<fs::path> PolicyBuilder::absolute(const fs::path& path, const Origin& origin,
                                                const char* what) {
  if (path.empty() || !path.is_absolute()) {
    fail(Error::invalid(std::string("the ") + what + " '" + path.string() + "' from " + origin.describe() +
                        " is not an absolute path: write it from '/' or '~/'"));
    return std::nullopt;
  }
  return normal_absolute(path);
}

PolicyBuilder& PolicyBuilder::run_folder(const fs::path& path) {
  if (auto p = absolute(path, Origin::flag("--in"), "run folder")) {
    policy_.run_folder_ = *p;
    have_run_folder_ = true;
  }
  return *this;
}

PolicyBuilder& PolicyBuilder::run_home(const fs::path& path) {
  if (auto p = absolute(path, Origin::builtin(), "run home")) policy_.run_home_ = *p;
  return *this;
}

PolicyBuilder& PolicyBuilder::user_home(const fs::path& path) {
  if (auto p = absolute(path, Origin::builtin(), "user home")) policy_.user_home_ = *p;
  return *this;
}

PolicyBuilder& PolicyBuilder::temp_dir(const fs::path& path) {
  if (auto p = absolute(path, Origin::builtin(), "temp dir")) policy_.temp_dir_ = *p;
  return *this;
}

PolicyBuilder& PolicyBuilder::harness(std::string name) {
  policy_.harness_ = std::move(name);
  return *this;
}

PolicyBuilder& PolicyBuilder::platform(Platform platform) {
  platform_ = platform;
  return *this;
}

PolicyBuilder& PolicyBuilder::allow(const fs::path& path, Access access, std::string reason, Origin origin) {
  if (auto p = absolute(path, origin, "path")) {
    for (auto& g : policy_.grants_) {
      if (g.path != *p) continue;
      if (access == Access::write && g.access == Access::read) {
        g = {*p, access, std::move(reason), std::move(origin), g.create_if_missing};
      }
      return *this;
    }
    policy_.grants_.push_back({*p, access, std::move(reason), std::move(origin), false});
  }
  return *this;
}

PolicyBuilder& PolicyBuilder::allow_state_dir(const fs::path& path, std::string reason, Origin origin) {
  allow(path, Access::write, std::move(reason), std::move(origin));
  if (auto p = absolute(path, Origin::builtin(), "state dir"))
    for (auto& g : policy_.grants_)
      if (g.path == *p) g.create_if_missing = true;
  return *this;
}

PolicyBuilder& PolicyBuilder::allow_state_file(const fs::path& path, std::string reason, Origin origin) {
  allow(path, Access::write, std::move(reason), std::move(origin));
  if (auto p = absolute(path, Origin::builtin(), "state file"))
    for (auto& g : policy_.grants_)
      if (g.path == *p) g.create_if_missing = g.state_file = true;
  return *this;
}

PolicyBuilder& PolicyBuilder::deny(const fs::path& path, std::string reason, Origin origin) {
  if (auto p = absolute(path, origin, "denied path")) {
    if (std::none_of(policy_.denies_.begin(), policy_.denies_.end(), [&](auto& d) { return d.path == *p; }))
      policy_.denies_.push_back({*p, std::move(reason), std::move(origin)});
  }
  return *this;
}

PolicyBuilder& PolicyBuilder::read_only(const fs::path& path, std::string reason, Origin origin) {
  if (auto p = absolute(path, origin, "read-only path")) {
    if (std::none_of(policy_.read_only_.begin(), policy_.read_only_.end(),
                     [&](auto& r) { return r.path == *p; }))
      policy_.read_only_.push_back({*p, std::move(reason), std::move(origin)});
  }
  return *this;
}

PolicyBuilder& PolicyBuilder::fixed_entries(const fs::path& dir, std::vector<fs::path> open,
                                            std::string reason, Origin origin) {
  if (auto p = absolute(dir, origin, "folder of fixed entries")) {
    if (std::none_of(policy_.fixed_folders_.begin(), policy_.fixed_folders_.end(),
                     [&](auto& f) { return f.path == *p; })) {
      for (auto& e : open) e = normal_absolute(e);
      std::sort(open.begin(), open.end());
      policy_.fixed_folders_.push_back({*p, std::move(open), std::move(reason), std::move(origin)});
    }
  }
  return *this;
}

PolicyBuilder& PolicyBuilder::forbid_new_git(bool forbid, Origin origin) {
  policy_.forbid_new_git_ = forbid;
  policy_.forbid_new_git_origin_ = std::move(origin);
  return *this;
}

PolicyBuilder& PolicyBuilder::process_limit(std::uint64_t max, Origin origin) {
  if (auto why = check_process_limit(max); !why.empty())
    return fail(Error::invalid(origin.describe() + ": limits.processes " + why));
  policy_.process_limit_ = {max, std::move(origin)};
  return *this;
}

PolicyBuilder& PolicyBuilder::network(NetworkMode mode, Origin origin) {
  policy_.network_.mode = mode;
  policy_.network_.mode_origin = std::move(origin);
  return *this;
}

NetworkMode PolicyBuilder::network_mode() const {
  return policy_.network_.mode;
}

PolicyBuilder& PolicyBuilder::allow_host(const std::string& text, Origin origin) {
  auto rule = parse_host_rule(text);
  if (!rule) return fail(Error::invalid(origin.describe() + ": " + rule.error().message));
  auto& hosts = policy_.network_.hosts;
  const auto same = [&](const HostRule& h) {
    return h.pattern == rule.value().pattern && h.port == rule.value().port;
  };
  if (std::none_of(hosts.begin(), hosts.end(), same))
    hosts.push_back({rule.value().pattern, rule.value().port, std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::publish(const std::string& spec, Origin origin) {
  const auto bad = [&](const std::string& why) -> PolicyBuilder& {
    return fail(Error::invalid(origin.describe() + ": '" + spec.substr(0, 100) + "' " + why +
                               "; write PORT or PORT:HOSTPORT, e.g. --publish 3000 or --publish 3000:8080."));
  };
  const auto port_of = [](std::string_view text) -> int { return parse_port(text).value_or(0); };
  const std::size_t colon = spec.find(':');
  const int inside = port_of(std::string_view(spec).substr(0, colon));
  const int host = colon == std::string::npos ? inside : port_of(std::string_view(spec).substr(colon + 1));
  if (inside == 0) return bad("does not start with a port between 1 and 65535");
  if (host == 0) return bad("does not end with a port between 1 and 65535");
  for (const auto& p : policy_.network_.published) {
    if (p.host == host) return bad("publishes on 127.0.0.1:" + std::to_string(host) + " a second time");
  }
  policy_.network_.published.push_back(
      {static_cast<std::uint16_t>(inside), static_cast<std::uint16_t>(host), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::allow_port(int port, Origin origin) {
  if (port < 1 || port > 65535)
    return fail(Error::invalid("the port " + std::to_string(port) + " from " + origin.describe() +
                               " is not between 1 and 65535"));
  auto& ports = policy_.network_.ports;
  if (std::find(ports.begin(), ports.end(), port) == ports.end())
    ports.push_back(static_cast<std::uint16_t>(port));
  return *this;
}

PolicyBuilder& PolicyBuilder::local_servers(bool on, Origin origin, std::vector<std::uint16_t> ports) {
  if (std::find(ports.begin(), ports.end(), 0) != ports.end())
    return fail(Error::invalid(origin.describe() + ": Local servers' ports must be between 1 and 65535"));
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  policy_.network_.local_servers = on;
  policy_.network_.local_servers_origin = std::move(origin);
  policy_.network_.local_server_ports = on ? std::move(ports) : std::vector<std::uint16_t>{};
  return *this;
}

PolicyBuilder& PolicyBuilder::ask(std::chrono::seconds timeout, Origin origin) {
  policy_.network_.ask = timeout;
  policy_.network_.ask_origin = std::move(origin);
  return *this;
}

PolicyBuilder& PolicyBuilder::pass_env(std::string name, std::string reason, Origin origin) {
  if (auto refused = env_refusal(EnvRuleKind::pass, name, origin)) return fail(*refused);
  auto& pass = policy_.environment_.pass;
  if (std::none_of(pass.begin(), pass.end(), [&](const EnvPattern& p) { return p.pattern == name; }))
    pass.push_back({std::move(name), std::move(reason), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::dangerously_writable(const fs::path& path, Origin origin) {
  if (auto p = absolute(path, origin, "writable path")) unprotected_.push_back({*p, std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::keep_env(std::string pattern, std::string reason, Origin origin) {
  if (auto refused = env_refusal(EnvRuleKind::keep, pattern, origin)) return fail(*refused);
  policy_.environment_.keep.push_back({std::move(pattern), std::move(reason), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::strip_env(std::string pattern, std::string reason, Origin origin) {
  if (auto refused = env_refusal(EnvRuleKind::strip, pattern, origin)) return fail(*refused);
  policy_.environment_.strip.push_back({std::move(pattern), std::move(reason), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::set_env(std::string name, std::string value, std::string reason, Origin origin,
                                      bool secret) {
  if (auto refused = env_refusal(EnvRuleKind::set, name, origin)) return fail(*refused);
  auto& set = policy_.environment_.set;
  set.erase(std::remove_if(set.begin(), set.end(), [&](auto& s) { return s.name == name; }), set.end());
  set.push_back({std::move(name), std::move(value), std::move(reason), std::move(origin), secret});
  return *this;
}

PolicyBuilder& PolicyBuilder::nested_sandbox(NestedSandboxSwitch entry) {
  policy_.nested_.push_back(std::move(entry));
  return *this;
}

PolicyBuilder& PolicyBuilder::cache_layer(const fs::path& lower, const fs::path& view, std::string reason,
                                          Origin origin) {
  auto l = absolute(lower, origin, "cache");
  auto v = absolute(view, origin, "cache folder");
  if (l && v) policy_.cache_layers_.push_back({*l, *v, std::move(reason), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::suggested_host(std::string host, std::string reason, Origin origin) {
  policy_.suggested_hosts_.push_back({normalize_host(host), std::move(reason), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::home_file(HomeFile file) {
  if (!file.path.is_absolute())
    return fail(Error::internal(file.origin.describe() + ": the home file " + file.path.string() +
                                " is not absolute"));
  auto& all = policy_.home_files_;
  all.erase(std::remove_if(all.begin(), all.end(), [&](const HomeFile& f) { return f.path == file.path; }),
            all.end());
  all.push_back(std::move(file));
  return *this;
}

PolicyBuilder& PolicyBuilder::weakening(std::string description) {
  policy_.weakenings_.push_back(std::move(description));
  return *this;
}

PolicyBuilder& PolicyBuilder::allow_whole_home(bool allowed) {
  allow_whole_home_ = allowed;
  return *this;
}

Status PolicyBuilder::check_plugin_grant(const PathGrant& grant) const {
  const std::string who = "plugin " + grant.origin.source;
  for (const fs::path& home : {policy_.run_home_, policy_.user_home_}) {
    if (!home.empty() && is_within(home, grant.path))
      return Error::policy(who + " asked for " + grant.path.string() + ", which holds all of " +
                           home.string() + "; a plugin may only add carve-ins for its harness's own state");
  }
  if (grant.path == "/") return Error::policy(who + " asked for the whole filesystem ('/'); this is refused");
  // A grant around a denied path is fine (the deny still wins); a grant inside one is an attempt to un-deny
  // it.
  for (const auto& d : policy_.denies_) {
    if (is_within(grant.path, d.path))
      return Error::policy(who + " asked for " + grant.path.string() + ", inside the denied path " +
                           d.path.string() + " (" + d.origin.describe() +
                           "); a plugin cannot un-deny a secret path");
  }
  const bool in_home = !policy_.run_home_.empty() && is_within(grant.path, policy_.run_home_);
  const bool in_temp = !policy_.temp_dir_.empty() && is_within(grant.path, policy_.temp_dir_);
  // The machine's shared temp dirs hold other programs' files and sockets
  // (tmux's, ssh-agent's, a display's): never the run's. The run has a temp
  // dir of its own. On macOS a folder of the harness's own right in
  // /private/tmp is its scratch (Claude Code's), nothing above or beside it.
  const bool own_scratch = platform_ == Platform::macos && grant.path.parent_path() == "/private/tmp";
  // A home that lies in one (a test's, a throwaway account's) is still the run's home.
  if (!in_temp && !in_home && !own_scratch) {
    for (const char* shared : {"/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/tmp"})
      if (is_within(grant.path, shared))
        return Error::policy(who + " asked for " + grant.path.string() +
                             ", in the machine's shared temp dir " + shared +
                             ", where other programs keep their files and sockets; the run has a temp dir of "
                             "its own ($TMPDIR)");
  }
  if (grant.access == Access::write && !in_home && !in_temp && !own_scratch)
    return Error::policy(who + " asked to write " + grant.path.string() +
                         ", outside the run's home and temp dir; a plugin may make writable only its "
                         "harness's own state");
  return px::ok();
}

Result<Policy> PolicyBuilder::build() {
  if (error_) return *error_;
  if (!have_run_folder_) return Error::internal("a policy was built without a run folder");
  if (policy_.run_home_.empty()) policy_.run_home_ = policy_.user_home_;
  for (const auto& g : policy_.grants_) {
    if (g.origin.kind == Origin::Kind::plugin) {
      if (auto st = check_plugin_grant(g); !st) return st.error();
    } else if (!allow_whole_home_ && !policy_.user_home_.empty() && is_within(policy_.user_home_, g.path) &&
               (g.origin.kind == Origin::Kind::profile ||
                // The user may open the home for reading on purpose (the secret
                // paths stay denied); never for writing: every rc file and
                // every project of theirs would be the run's to change.
                (g.access == Access::write && g.origin.kind != Origin::Kind::builtin))) {
      const bool profile = g.origin.kind == Origin::Kind::profile;
      return Error::policy(
          std::string(profile ? "the profile entry " : "the grant ") + g.path.string() + " (" +
          g.origin.describe() +
          (profile ? ") opens all of your home " : ") makes all of your home writable: ") +
          policy_.user_home_.string() + "; list the folders it needs" +
          (profile ? ", or set dangerously_allow_home: true"
                   : ", or list the home in a profile of your own with dangerously_allow_home: true"));
    }
  }
  for (const auto& u : unprotected_) {
    // One protected path (or a folder of them) inside the run's folder or
    // home at a time: `/` or the home would lift every protection at once.
    const bool inside = (is_within(u.path, policy_.run_folder_) && u.path != policy_.run_folder_) ||
                        (is_within(u.path, policy_.run_home_) && u.path != policy_.run_home_);
    if (!inside)
      return Error::invalid(u.origin.describe() + ": " + u.path.string() +
                            " is not inside the run folder; name the one protected path the run must write "
                            "(e.g. .vscode), which `parallex policy show` lists");
    auto& ro = policy_.read_only_;
    const auto before = ro.size();
    ro.erase(std::remove_if(ro.begin(), ro.end(),
                            [&](const ReadOnlyPath& r) { return is_within(r.path, u.path); }),
             ro.end());
    if (ro.size() == before)
      return Error::invalid(u.origin.describe() + ": " + u.path.string() +
                            " is not a read-only path of this policy, so there is nothing to make writable; "
                            "`parallex policy show` lists them");
    policy_.weakenings_.push_back(
        "dangerously_writable " + u.path.string() + " (" + u.origin.describe() +
        "): the run may write it, though other programs run or trust what is there");
  }
  if (auto st = check_brokered(); !st) return st.error();
  // A cache the policy hides, or holding a path it hides, is not shown
  // beneath the run's: the layer would show all of it.
  auto& layers = policy_.cache_layers_;
  layers.erase(std::remove_if(layers.begin(), layers.end(),
                              [&](const CacheLayer& c) {
                                return std::any_of(
                                    policy_.denies_.begin(), policy_.denies_.end(), [&](auto& d) {
                                      return is_within(c.lower, d.path) || is_within(d.path, c.lower);
                                    });
                              }),
               layers.end());
  auto& net = policy_.network_;
  if (net.mode == NetworkMode::allowlist && net.hosts.empty() && !net.local_servers) {
    // An empty allowlist blocks everything: say so plainly as offline. (With
    // Local servers on it means "this machine's servers only".)
    net.mode = NetworkMode::offline;
    net.mode_origin = Origin::builtin("no host is allowed");
  }
  if (net.mode == NetworkMode::offline && net.local_servers) {
    net.local_servers = false;  // offline means no network at all, local servers included
    net.local_server_ports.clear();
  }
  std::sort(policy_.grants_.begin(), policy_.grants_.end(), [](auto& a, auto& b) { return a.path < b.path; });
  std::sort(policy_.denies_.begin(), policy_.denies_.end(), [](auto& a, auto& b) { return a.path < b.path; });
  std::sort(policy_.read_only_.begin(), policy_.read_only_.end(),
            [](auto& a, auto& b) { return a.path < b.path; });
  std::sort(policy_.fixed_folders_.begin(), policy_.fixed_folders_.end(),
            [](auto& a, auto& b) { return a.path < b.path; });
  return std::move(policy_);
}

}  // namespace px::policy
