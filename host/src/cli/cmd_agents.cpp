// `parallex agent new|list|show|set|delete|key|github|credential|run|sign-in`:
// agent workspaces, each with an identity of its own (see docs/agents.md).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "agents/git_config.hpp"
#include "agents/names.hpp"
#include "agents/run_inputs.hpp"
#include "agents/ssh_key.hpp"
#include "agents/store.hpp"
#include "agents/token.hpp"
#include "cli/agents_cli.hpp"
#include "cli/output.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "killswitch/registry.hpp"
#include "mcp/browser.hpp"
#include "pluginhost/plugin_set.hpp"
#include "policy/ask.hpp"
#include "policy/local_servers.hpp"
#include "run/agent_view.hpp"
#include "run/compose_request.hpp"
#include "supervisor/decoys.hpp"

namespace px::cli::agent_cmd {

policy::Platform this_platform() {
#ifdef __APPLE__
  return policy::Platform::macos;
#else
  return policy::Platform::linux_host;
#endif
}

namespace {

using agents::AgentConfig;
using agents::AgentPaths;

// The rules flags shared by `new` and `set`.
struct RuleFlags {
  std::vector<std::string> repos, allow, grants;
  bool online = false, offline = false;
  std::string local_servers = kNotGiven;  // after --local-servers: "", "3000,5432", "off" (old: "on")
  std::vector<std::string> env;           // --env NAME | NAME=VALUE
  std::string processes;                  // --processes N | default
  std::string ask = kNotGiven;            // after --ask: "", "90", "off"
  static constexpr const char* kNotGiven = "\x01";
};

// "; local servers on, every port" for the summary lines.
std::string local_servers_text(const AgentConfig& c) {
  std::string s;
  if (c.local_servers)
    s = "; local servers on, " + policy::LocalServers{true, c.local_server_ports}.describe();
  if (c.ask_seconds > 0)
    s += "; asks you about other hosts (parallex approve), up to " + std::to_string(c.ask_seconds) + " s";
  return s;
}

void add_rule_flags(CLI::App& app, RuleFlags& f) {
  app.add_option("--repo", f.repos,
                 "A GitHub repository OWNER/REPO the agent works on (sets the token's owner)");
  app.add_option("--allow", f.allow, "Allow HOST and its subdomains through its proxy");
  app.add_flag("--online", f.online, "Allow every host (through its proxy, logged)");
  app.add_flag("--offline", f.offline, "No network at all");
  // The run commands' spelling; `--local-servers on|off` (the old one) still reads, with a note.
  app.add_option("--local-servers", f.local_servers,
                 "Let it reach servers on this machine's loopback: --local-servers (every port), "
                 "--local-servers=3000,5432 (those ports only) or --local-servers=off; off unless turned on")
      ->expected(0, 1);
  app.add_option("--ask", f.ask,
                 "Hold a connection outside its rule and ask you (parallex approve / deny) instead of "
                 "refusing: --ask (up to 120 s), --ask=SECONDS, --ask=off")
      ->expected(0, 1);
  app.add_option("--env", f.env,
                 "Pass a variable to its runs on purpose: NAME (from your environment at each run) or "
                 "NAME=VALUE (kept in agent.yaml)");
  app.add_option("--grant", f.grants, "Grant PATH read-only (PATH or PATH:ro) or read-write (PATH:rw)");
  app.add_option("--processes", f.processes,
                 "The most processes (threads included) its runs may have at once, or `default` for the "
                 "profiles' (4096 unless a profile says otherwise)");
}

// Applies `f` over `c`. `fresh`: for `new`, where no flag means offline.
Status apply_rules(AgentConfig& c, const RuleFlags& f, std::vector<std::string>& notes) {
  policy::NetworkFlags net{f.online, f.offline, f.allow, std::nullopt, {}, {}, std::nullopt};
  std::optional<policy::LocalServers> local;
  if (f.local_servers != RuleFlags::kNotGiven) {
    if (f.local_servers == "on" || f.local_servers == "off")
      notes.push_back("--local-servers " + f.local_servers + " is the old spelling: write " +
                      (f.local_servers == "on" ? "--local-servers" : "--local-servers=off") +
                      " (or --local-servers=PORT,PORT for named ports only)");
    PX_TRY_ASSIGN(local, policy::parse_local_servers(f.local_servers, "--local-servers " + f.local_servers));
    net.local_servers = local->on;
  }
  PX_TRY(policy::check_network_flags(net));
  if (f.ask != RuleFlags::kNotGiven) {
    PX_TRY_ASSIGN(auto seconds, policy::parse_ask(f.ask, "--ask " + f.ask));
    c.ask_seconds = static_cast<std::uint32_t>(seconds.count());
  }
  if (f.processes == "default") {
    c.processes.reset();
  } else if (!f.processes.empty()) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(f.processes.data(), f.processes.data() + f.processes.size(), n);
    if (ec != std::errc() || end != f.processes.data() + f.processes.size())
      return Error::invalid("--processes " + f.processes + ": give a number of processes, or `default`");
    if (auto why = policy::check_process_limit(n); !why.empty()) return Error::invalid("--processes " + why);
    c.processes = n;
  }
  for (const auto& spec : f.env) {
    const std::string name = spec.substr(0, spec.find('='));
    if (auto why = policy::check_env_name(name); !why.empty())
      return Error::invalid("--env " + spec + ": " + why);
    c.env.erase(std::remove_if(c.env.begin(), c.env.end(),
                               [&](const std::string& e) { return e.substr(0, e.find('=')) == name; }),
                c.env.end());
    c.env.push_back(spec);
  }
  for (const auto& r : f.repos) {
    PX_TRY(agents::check_repo(r));
    if (std::find(c.repos.begin(), c.repos.end(), r) == c.repos.end()) c.repos.push_back(r);
  }
  for (const auto& h : f.allow) {
    if (auto why = policy::check_host_pattern(h); !why.empty())
      return Error::invalid("--allow " + h + ": " + why);
  }
  if (f.online) {
    c.network = policy::NetworkMode::online;
    c.allow.clear();
  } else if (f.offline) {
    c.network = policy::NetworkMode::offline;
    c.allow.clear();
  } else if (!f.allow.empty()) {
    for (const auto& h : f.allow) PX_TRY(run::allow_host(c, h));
  }
  // Local servers: off unless the user turns it on (an agent's run reaching
  // this machine's databases and dev servers is a choice, never a default).
  if (local) {
    c.local_servers = local->on;
    c.local_server_ports = local->ports;
  } else if (f.offline) {
    c.local_servers = false;  // offline means no network at all, local servers included
    c.local_server_ports.clear();
  }
  // Local servers on an agent with no host allowed means this machine's
  // servers only (as `run --local-servers` does): an allowlist of no host.
  // Offline stays offline only when it was asked for in the same command.
  if (c.network == policy::NetworkMode::offline && c.local_servers) {
    if (f.offline)
      return Error::invalid("--offline turns off the network, Local servers included; drop --local-servers");
    c.network = policy::NetworkMode::allowlist;
    c.allow.clear();
  }
  for (const auto& g : f.grants) PX_TRY(run::grant_folder(c, g, notes));
  return ok();
}

std::string network_text(const AgentConfig& c) {
  switch (c.network) {
    case policy::NetworkMode::online:
      return "online (every host, through its proxy)";
    case policy::NetworkMode::offline:
      return "offline";
    case policy::NetworkMode::allowlist: {
      // The same word as `agent list`, reports and the MCP server: an allowlist, here of no host
      // (with Local servers on, this machine's servers are all it reaches).
      if (c.allow.empty())
        return "allowlist of no host (parallex agent set " + c.name + " --allow HOST adds one)";
      std::string s = "limited to ";
      for (std::size_t i = 0; i < c.allow.size(); ++i) s += (i ? ", " : "") + c.allow[i];
      return s + " (and subdomains)";
    }
  }
  return "?";
}

struct Loaded {
  AgentPaths paths;
  AgentConfig config;
};

Result<Loaded> load(const std::string& name) {
  PX_TRY_ASSIGN(auto paths, agents::find_agent(agents::default_agents_root(), name));
  PX_TRY_ASSIGN(auto config, agents::load_config(paths));
  return Loaded{std::move(paths), std::move(config)};
}

std::string fingerprint(const AgentPaths& p) {
  auto pub = agents::read_file(p.public_key());
  if (!pub) return "(missing: " + p.public_key().string() + ")";
  auto fp = agents::ssh_fingerprint(pub.value());
  return fp ? fp.value() : "(damaged: " + p.public_key().string() + ")";
}

// ---- new ---------------------------------------------------------------

struct NewOptions {
  std::string name, email;
  RuleFlags rules;
  bool share = false;
  std::string browser;  // "" or "chromium"
  bool decoys = false;
  bool json = false;
};

nlohmann::json describe(const Loaded& a, bool full);

int do_new(const NewOptions& o) {
  AgentConfig c;
  c.name = o.name;
  c.email = o.email;
  c.share_harness_config = o.share;
  c.decoys = o.decoys;
  if (auto s = agents::check_name(o.name); !s) return report_error(s.error());
  if (auto s = agents::check_email(o.email); !s) return report_error(s.error());
  std::vector<std::string> notes;
  if (auto s = apply_rules(c, o.rules, notes); !s) return report_error(s.error());
  auto created = run::make_agent(c, notes);
  for (const auto& n : notes) say(n);
  if (!created) return report_error(created.error());
  const AgentPaths& p = created.value();
  if (o.browser == "chromium") {
    auto profile = mcp::create_agent_browser_profile(p.root, c.name);
    if (!profile) return report_error(profile.error());
    say("its own Chromium profile is " + profile.value().user_data_dir.string() +
        "; open it with `parallex agent browser " + c.name + "`");
  }
  if (o.json) {
    // What `agent show --json` prints of it, read back from the store.
    auto made = load(c.name);
    if (!made) return report_error(made.error());
    print_json(describe(made.value(), true));
    return 0;
  }
  std::printf("Made agent %s in %s\n", c.name.c_str(), p.root.c_str());
  std::printf("  commits as  %s (agent) <%s>, signed with %s\n", c.name.c_str(), c.email.c_str(),
              fingerprint(p).c_str());
  std::printf("  network     %s%s\n", network_text(c).c_str(), local_servers_text(c).c_str());
  std::printf("Next:\n");
  std::printf("  parallex agent key %s       add its signing key on GitHub\n", c.name.c_str());
  std::printf("  parallex agent github %s    give it a GitHub token of its own\n", c.name.c_str());
  std::printf("  parallex agent run %s --in DIR -- CMD...\n", c.name.c_str());
  return 0;
}

// ---- list / show -------------------------------------------------------

nlohmann::json describe(const Loaded& a, bool full) {
  return run::describe_agent(a.paths, a.config, full, this_platform());
}

int do_list(bool json) {
  std::vector<std::string> damaged;
  auto listed = run::list_agents_json(this_platform(), damaged);
  if (!listed) return report_error(listed.error());
  // One damaged agent does not hide the others.
  for (const auto& d : damaged) say(d);
  const nlohmann::json& all = listed.value();
  const int status = damaged.empty() ? 0 : 1;
  if (json) {
    print_json(all);
    return status;
  }
  if (all.empty()) std::printf("No agents yet. Make one with `parallex agent new NAME --email EMAIL`.\n");
  for (const auto& j : all) {
    if (j.contains("error")) continue;
    std::printf("%-20s %-32s %-10s token: %s\n", j["name"].get<std::string>().c_str(),
                j["email"].get<std::string>().c_str(), j["network"]["mode"].get<std::string>().c_str(),
                j["github_token"].get<std::string>().c_str());
  }
  return status;
}

int do_show(const std::string& name, bool json) {
  auto a = load(name);
  if (!a) return report_error(a.error());
  const auto j = describe(a.value(), true);
  if (json) {
    print_json(j);
    return 0;
  }
  const auto& c = a.value().config;
  std::printf("Agent        %s\n", c.name.c_str());
  std::printf("Commits as   %s (agent) <%s>\n", c.name.c_str(), c.email.c_str());
  std::printf("Signing key  %s\n", j["key_fingerprint"].get<std::string>().c_str());
  const std::string token_text =
      j["github_token"] == "present"
          ? "present (in its own gh config; brokered: its runs hold a placeholder, and their proxy sends the "
            "token to " +
                agents::github_token_hosts_text(c) + " only)"
          : "none: its tools get a placeholder GitHub refuses (`parallex agent github`)";
  std::printf("GitHub token %s\n", token_text.c_str());
  std::printf("Repositories %s\n",
              c.repos.empty() ? "(none named)" : to_json_text(nlohmann::json(c.repos)).c_str());
  std::printf("Network      %s%s\n", network_text(c).c_str(), local_servers_text(c).c_str());
  std::printf("Local servers %s\n",
              policy::LocalServers{c.local_servers, c.local_server_ports}.describe().c_str());
  if (c.processes)
    std::printf("Processes    at most %llu at once in its runs\n",
                static_cast<unsigned long long>(*c.processes));
  std::printf("Reads/writes its home %s, the folder it runs in, the default profile's system paths\n",
              a.value().paths.home().c_str());
  std::printf("Reads        its keys %s and gh config %s (never writes them)\n",
              a.value().paths.keys().c_str(), a.value().paths.gh().c_str());
  for (const auto& g : c.grants)
    std::printf("Granted      %s (%s)\n", g.path.c_str(),
                g.access == policy::Access::write ? "read-write" : "read-only");
  for (const auto& [var, dir] : j["harness_config_dirs"].items())
    std::printf("Harness      %s=%s\n", var.c_str(), dir.get<std::string>().c_str());
  if (c.share_harness_config)
    for (const auto& f : j["shared_harness_files"])
      std::printf("Shared (ro)  %s\n", f.get<std::string>().c_str());
  if (c.decoys) std::printf("Decoys       planted in its home; any open during a run is flagged\n");
  for (const auto& cred : c.broker.credentials) {
    std::string hosts;
    for (const auto& h : cred.spec.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    std::printf("Credential   %s%s (agent.yaml:%d)\n", cred.spec.name.c_str(),
                cred.off ? ": off" : (hosts.empty() ? "" : " for " + hosts).c_str(), cred.line);
  }
  for (const auto& r : c.broker.requests)
    std::printf("Requests     %s: %s (agent.yaml:%d)\n", r.host.c_str(),
                r.passthrough ? "passthrough" : (std::to_string(r.rules.size()) + " rule(s)").c_str(),
                r.line);
  std::printf("Store        %s\n", a.value().paths.root.c_str());
  return 0;
}

// ---- set ---------------------------------------------------------------

struct SetOptions {
  std::string name;
  std::optional<std::string> email;
  RuleFlags rules;
  std::vector<std::string> disallow, ungrant, remove_repos;
  std::string share;   // "", "on", "off"
  std::string decoys;  // "", "on", "off"
};

int do_set(const SetOptions& o) {
  auto a = load(o.name);
  if (!a) return report_error(a.error());
  AgentConfig c = a.value().config;
  const AgentPaths& p = a.value().paths;
  if (o.email) {
    if (auto s = agents::check_email(*o.email); !s) return report_error(s.error());
    c.email = *o.email;
  }
  std::vector<std::string> notes;
  if (auto s = apply_rules(c, o.rules, notes); !s) return report_error(s.error());
  for (const auto& h : o.disallow)
    if (auto s = run::disallow_host(c, h); !s) return report_error(s.error());
  for (const auto& r : o.remove_repos) {
    auto it = std::find(c.repos.begin(), c.repos.end(), r);
    if (it == c.repos.end())
      return report_error(
          Error::invalid("--remove-repo " + r + ": the agent does not name that repository."));
    c.repos.erase(it);
  }
  for (const auto& g : o.ungrant)
    if (auto s = run::ungrant_folder(c, g); !s) return report_error(s.error());
  if (!o.share.empty()) c.share_harness_config = o.share == "on";
  if (!o.decoys.empty()) {
    const bool was = c.decoys;
    c.decoys = o.decoys == "on";
    if (c.decoys) {
      std::vector<std::string> planted;
      const auto s = run::plant_agent_decoys(p, planted);
      for (const auto& line : planted) say(line);
      if (!s) return report_error(s.error());
    } else if (was) {
      say("decoys are no longer watched; the decoy files stay in " + p.home().string() +
          " (they hold nothing real)");
    }
  }
  if (auto s = run::save_agent(p, c); !s) return report_error(s.error());
  if (c.share_harness_config) {
    auto linked = agents::link_shared_harness_config(p, user_home());
    if (!linked) return report_error(linked.error());
    for (const auto& n : linked.value()) say(n);
  } else if (a.value().config.share_harness_config) {
    // Sharing turned off: remove only our own links to the user's files.
    std::error_code ec;
    for (const auto& f : agents::shared_harness_files(user_home())) {
      const fs::path link = p.home() / ".claude" / f.filename();
      if (fs::is_symlink(fs::symlink_status(link, ec)) && fs::read_symlink(link, ec) == f)
        fs::remove(link, ec);
    }
  }
  for (const auto& n : notes) say(n);
  std::printf("Updated agent %s: network %s%s\n", c.name.c_str(), network_text(c).c_str(),
              local_servers_text(c).c_str());
  return 0;
}

// ---- delete / key ------------------------------------------------------

int do_delete(const std::string& name, bool yes) {
  auto paths = agents::find_agent(agents::default_agents_root(), name);
  if (!paths) return report_error(paths.error());
  const AgentPaths& p = paths.value();
  if (killswitch::agent_has_live_run(parallex_runtime_dir(), name))
    return report_error(
        Error::conflict("Agent " + name +
                        " is running; deleting it now would pull its home from under the run. "
                        "End the run first (`parallex runs`, `parallex kill RUN-ID`), then "
                        "delete it."));
  // A damaged agent can still be deleted: that is how it is got rid of.
  auto config = agents::load_config(p);
  const std::string fp = fingerprint(p);
  auto token = agents::load_token(p.gh());
  const bool had_token = token && token.value();
  if (!confirm("Delete agent " + name +
                   " for good: its signing key, GitHub token, sign-ins, home, snapshots and run "
                   "records in " +
                   p.root.string() + "?",
               yes)) {
    say("agent " + name + " was not deleted" +
        (::isatty(STDIN_FILENO) ? "" : " (no terminal to ask; add --yes)") + ".");
    return 1;
  }
  if (auto s = agents::delete_agent(p); !s) return report_error(s.error());
  std::printf("Deleted agent %s.\n", name.c_str());
  std::printf("Revoke on GitHub too:\n");
  std::printf("  - the signing key %s: https://github.com/settings/keys\n", fp.c_str());
  if (had_token)
    std::printf("  - its token \"parallex %s\": https://github.com/settings/personal-access-tokens\n",
                name.c_str());
  else
    std::printf(
        "  - any token made for it (\"parallex %s\"): https://github.com/settings/personal-access-tokens\n",
        name.c_str());
  std::printf("  - a Claude Code or Codex sign-in made for it, from its account's settings\n");
  return 0;
}

int do_key(const std::string& name) {
  auto a = load(name);
  if (!a) return report_error(a.error());
  auto pub = agents::read_file(a.value().paths.public_key());
  if (!pub) return report_error(pub.error());
  std::fputs(pub.value().c_str(), stdout);
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "\nAdd it on GitHub as a Signing Key (not an Authentication Key): https://github.com/settings/ssh/new\n"
      "on the account whose verified email is %s; the agent's commits then show as Verified.\n"
      "Fingerprint: %s\n",
      a.value().config.email.c_str(), fingerprint(a.value().paths).c_str());
  return 0;
}

// ---- registration ------------------------------------------------------

Action setup_agents(CLI::App& app, GlobalOptions&) {
  // One sub-command, or an option another component adds (`agent -w NAME -- CMD`).
  app.require_subcommand(0, 1);
  auto chosen = std::make_shared<Action>();
  auto add = [&](const char* name, const char* summary, const std::function<Action(CLI::App&)>& fn) {
    CLI::App* sub = app.add_subcommand(name, summary);
    Action action = fn(*sub);
    sub->callback([chosen, action] { *chosen = action; });
  };

  add("new", "Make an agent workspace with an identity of its own", [](CLI::App& s) {
    auto o = std::make_shared<NewOptions>();
    s.add_option("name", o->name, "Its name: lowercase letters, digits, '-', '_', '.'")->required();
    s.add_option("--email", o->email, "The email its commits use (verified on its GitHub account)")
        ->required();
    add_rule_flags(s, o->rules);
    s.add_flag("--share-harness-config", o->share,
               "Share your CLAUDE.md, skills and plugins with it, read-only");
    s.add_flag("--decoys", o->decoys,
               "Plant decoy credentials in its home; any open of them during a run is flagged");
    s.add_option("--browser", o->browser,
                 "Give it a browser profile of its own (red, its name in the title, signed in to nothing)")
        ->check(CLI::IsMember({"chromium"}));
    s.add_flag("--json", o->json, "Print the new agent as JSON (what `agent show --json` prints)");
    return Action([o] { return do_new(*o); });
  });
  add("list", "List the agents", [](CLI::App& s) {
    auto json = std::make_shared<bool>(false);
    s.add_flag("--json", *json, "Print JSON");
    return Action([json] { return do_list(*json); });
  });
  add("show", "What an agent can reach, and its identity", [](CLI::App& s) {
    auto name = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    s.add_option("name", *name, "The agent")->required();
    s.add_flag("--json", *json, "Print JSON");
    return Action([name, json] { return do_show(*name, *json); });
  });
  add("set", "Change an agent's rules", [](CLI::App& s) {
    auto o = std::make_shared<SetOptions>();
    s.add_option("name", o->name, "The agent")->required();
    s.add_option("--email", o->email, "The email its commits use");
    add_rule_flags(s, o->rules);
    s.add_option("--disallow", o->disallow, "Stop allowing HOST");
    s.add_option("--ungrant", o->ungrant, "Take back the grant of PATH");
    s.add_option("--remove-repo", o->remove_repos, "Forget the repository OWNER/REPO");
    s.add_option("--share-harness-config", o->share,
                 "Share your CLAUDE.md, skills and plugins read-only: on or off")
        ->check(CLI::IsMember({"on", "off"}));
    s.add_option("--decoys", o->decoys, "Decoy credentials in its home, flagged when opened: on or off")
        ->check(CLI::IsMember({"on", "off"}));
    return Action([o] { return do_set(*o); });
  });
  add("delete", "Delete an agent, its key, token and sign-ins, for good", [](CLI::App& s) {
    auto name = std::make_shared<std::string>();
    auto yes = std::make_shared<bool>(false);
    s.add_option("name", *name, "The agent")->required();
    s.add_flag("--yes,-y", *yes, "Do not ask");
    return Action([name, yes] { return do_delete(*name, *yes); });
  });
  add("key", "Print an agent's public signing key and how to add it on GitHub", [](CLI::App& s) {
    auto name = std::make_shared<std::string>();
    s.add_option("name", *name, "The agent")->required();
    return Action([name] { return do_key(*name); });
  });
  add("github", "Give an agent a GitHub token of its own", setup_github);
  add("credential", "Git credential helper of an agent (git runs it)", setup_credential);
  add("sign-in", "Copy your harness sign-in into an agent's home, after asking", setup_sign_in);
  add("run", "Run a command as an agent, sealed, through its network rules", setup_run);
  for (const auto& sub : subcommands_of("agent")) add(sub.name, sub.summary, sub.setup);
  std::vector<std::function<Action()>> extensions;
  for (const auto& ext : extension_registry())
    if (std::string_view(ext.parent) == "agent") extensions.push_back(ext.setup(app));
  return [chosen, extensions] {
    // An extension (`agent -w NAME -- CMD`) checks its own options against a
    // chosen sub-command and says which option went where.
    for (const auto& resolve : extensions)
      if (Action action = resolve()) return action();
    if (*chosen) return (*chosen)();
    return report_error(
        Error::invalid("`parallex agent` needs a sub-command (new, list, show, run, ...) or -w NAME "
                       "-- CMD; see `parallex agent --help`."));
  };
}

}  // namespace

PARALLEX_COMMAND("agent", "Agent workspaces: an identity of their own, sealed runs", 20, setup_agents);

}  // namespace px::cli::agent_cmd
