// A workspaced run (`harness -w`, `workspace agent`): checks every input, makes
// a fresh workspace, composes the seal for it (the default profile, the
// project's profile and hosts, the harness's carve-outs, the workspace's git
// paths, the scoped GitHub token) and runs the command through the supervisor.
// Events for the tab host go out as it happens (schema: docs/workspaces.md).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "agents/git_config.hpp"
#include "agents/run_inputs.hpp"
#include "agents/store.hpp"
#include "agents/token.hpp"
#include "backend/linux/capabilities.hpp"
#include "cli/output.hpp"
#include "cli/policy_options.hpp"
#include "cli/run_support.hpp"
#include "cli/workspace_cli.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "supervisor/run.hpp"
#include "workspace/config.hpp"
#include "workspace/events.hpp"
#include "workspace/github_token.hpp"
#include "workspace/project.hpp"
#include "workspace/sealed_git.hpp"
#include "workspace/workspace.hpp"

namespace px::cli::workspace_cmd {

namespace {

namespace ws = px::workspace;
using nlohmann::json;

// Inside the seal the run's temp dir is mounted at /tmp.
constexpr const char* kGhConfigInside = "/tmp/parallex-gh";

fs::path self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("parallex") : p;
}

struct Isolation {
  bool sealed = true;
  std::vector<std::string> notices;  // each one line
};

// Whether the run can be sealed: the project may switch it off, and the kernel
// may lack what the seal needs. Then the workspace is still made, unconfined.
Isolation decide_isolation(const ws::ProjectConfig& config, const ws::Project& project) {
  Isolation iso;
  if (!config.sandbox_workspaces) {
    iso.sealed = false;
    iso.notices.push_back(
        "isolation is off: sandbox_workspaces is false in " + project.config_file().string() + ":" +
        std::to_string(config.sandbox_workspaces_line) +
        ", so the command runs unconfined in the workspace (it can read and write what you can)");
    return iso;
  }
  std::string missing, weaker;
  for (const auto& g : seal::detect_guarantees()) {
    if (g.enforced) continue;
    std::string& list = g.required ? missing : weaker;
    list += (list.empty() ? "" : "; ") + g.name + " (" + g.detail + ")";
  }
  if (!missing.empty()) {
    iso.sealed = false;
    iso.notices.push_back("isolation is not active: this kernel cannot give " + missing +
                          ", so the command runs unconfined in the workspace (see `parallex check`)");
  } else if (!weaker.empty()) {
    iso.notices.push_back("the seal is weaker on this kernel: " + weaker + " (see `parallex check`)");
  }
  return iso;
}

struct Agent {
  agents::AgentPaths paths;
  agents::AgentConfig config;
  std::optional<std::string> token;
};

Result<Agent> load_agent(const std::string& name) {
  PX_TRY_ASSIGN(auto paths, agents::find_agent(agents::default_agents_root(), name));
  PX_TRY_ASSIGN(auto config, agents::load_config(paths));
  PX_TRY(agents::check_layout(paths));
  PX_TRY_ASSIGN(auto token, agents::load_token(paths.gh()));
  PX_TRY(agents::write_git_identity(paths, config, self_exe()));
  return Agent{std::move(paths), std::move(config), std::move(token)};
}

// Refused hosts from the run's proxy log: one entry per host and port.
json refused_from_log(const fs::path& log) {
  std::map<std::string, json> by_host;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    json d = json::parse(line, nullptr, false);
    if (d.is_discarded() || d.value("verdict", "") != "denied") continue;
    const std::string key = d.value("host", "") + ":" + std::to_string(d.value("port", 0));
    auto& entry = by_host[key];
    if (entry.is_null())
      entry = json{{"host", d.value("host", "")},
                   {"port", d.value("port", 0)},
                   {"reason", d.value("reason", "")},
                   {"count", 0},
                   {"first_time", d.value("time", "")}};
    entry["count"] = entry["count"].get<int>() + 1;
  }
  json out = json::array();
  for (auto& [k, v] : by_host) out.push_back(std::move(v));
  return out;
}

int fail(ws::EventSink& events, const Error& error) {
  events.emit("error", {{"message", redact(error.message)}});
  return report_error(error);
}

}  // namespace

void add_workspaced_run_options(CLI::App& app, WorkspacedRun& o) {
  app.add_option("--name", o.name, "The workspace's name (default: a fresh ws-XXXX)");
  app.add_option("--from", o.from,
                 "Start the workspace from this branch, tag or commit (default: the current branch)");
  app.add_option("--harness", o.harness, "The harness plugin to use (default: detected from the command)");
  app.add_flag("--offline", o.offline,
               "No network at all (default: online, through the run's proxy, logged)");
  app.add_option("--events", o.events, "Write JSON-lines events to FILE or fd:N (see docs/workspaces.md)");
  app.add_option("command", o.command, "The command to run in the workspace, after --");
}

int run_workspaced(const WorkspacedRun& o) {
  ws::EventSink events;
  if (!o.events.empty()) {
    auto sink = ws::EventSink::open(o.events);
    if (!sink) return report_error(sink.error());
    events = std::move(sink).value();
  }
  if (o.command.empty())
    return fail(events,
                Error::invalid("Give the command to run in the workspace after `--`, e.g. -- claude."));

  // Every input is checked before anything is made.
  auto project = ws::find_project(fs::current_path());
  if (!project) return fail(events, project.error());
  const ws::Project& p = project.value();
  auto config = ws::load_project_config(p.config_file());
  if (!config) return fail(events, config.error());
  std::optional<Agent> agent;
  std::optional<std::string> token;
  if (!o.agent.empty()) {
    auto loaded = load_agent(o.agent);
    if (!loaded) return fail(events, loaded.error());
    agent = std::move(loaded).value();
  } else {
    auto loaded = ws::load_github_token(p.token_file());
    if (!loaded) return fail(events, loaded.error());
    token = std::move(loaded).value();
  }
  if (o.name)
    if (auto s = ws::check_workspace_name(*o.name); !s) return fail(events, s.error());
  auto temp = make_run_temp();
  if (!temp) return fail(events, temp.error());

  // The notice comes first: it is the first line of the tab's output.
  Isolation iso = decide_isolation(config.value(), p);
  for (const auto& n : iso.notices) {
    std::fprintf(stderr, "parallex: notice: %s\n", n.c_str());
    events.emit("notice", {{"message", n}, {"kind", iso.sealed ? "weaker_seal" : "isolation_off"}});
  }
  std::fflush(stderr);

  auto created = ws::create_workspace(p, {o.name, o.from});
  if (!created) return fail(events, created.error());
  const ws::WorkspaceInfo& w = created.value();
  events.emit("workspace_created", {{"name", w.name},
                                    {"branch", w.branch},
                                    {"path", w.path.string()},
                                    {"base", w.base},
                                    {"base_commit", w.base_commit},
                                    {"project", p.root.string()}});
  std::fprintf(stderr, "parallex: workspace %s at %s (branch %s, from %s)\n", w.name.c_str(), w.path.c_str(),
               w.branch.c_str(), w.base.c_str());
  // Up to the start of the command, a failure takes the fresh (clean) workspace back.
  auto abandon = [&](const Error& error) {
    (void)ws::remove_workspace(p, w.name, true);
    std::error_code ec;
    fs::remove_all(temp.value(), ec);
    return fail(events, error);
  };

  auto git_paths = ws::sealed_git_paths(p, w);
  if (!git_paths) return abandon(git_paths.error());

  std::map<std::string, std::string> env;
  std::vector<std::string> env_notes;
  env["PARALLEX_WORKSPACE"] = w.name;
  const char* path_env = std::getenv("PATH");
  const auto node = find_executable("node", path_env ? path_env : "");
  if (node) {
    env["PARALLEX_NODE"] = fs::absolute(*node).lexically_normal().string();
  } else {
    env_notes.push_back("PARALLEX_NODE is not set: no node on the PATH of parallex");
  }
  std::set<std::string> secret_env;
  if (!agent) {
    // gh reads hosts.yml from its config dir on every call: an empty private
    // one, so it sees the scoped token or nothing (never the user's hosts.yml).
    const fs::path gh_host = temp.value() / "parallex-gh";
    std::error_code ec;
    fs::create_directories(gh_host, ec);
    ::chmod(gh_host.c_str(), 0700);
    env["GH_CONFIG_DIR"] = iso.sealed ? kGhConfigInside : gh_host.string();
    env["GIT_TERMINAL_PROMPT"] = "0";  // without a token, push fails at once instead of asking
    if (token) {
      // The one variable of the strip list that comes back: a fresh value
      // chosen for this project, not the ambient one the profile removed.
      env["GH_TOKEN"] = *token;
      secret_env.insert("GH_TOKEN");
      // git push over HTTPS with that token alone (the helper reads the
      // variable; the token itself is not written in any config), and GitHub
      // SSH remotes turned to HTTPS, since ~/.ssh and SSH_AUTH_SOCK are gone.
      env["GIT_CONFIG_COUNT"] = "3";
      env["GIT_CONFIG_KEY_0"] = "credential.https://github.com.helper";
      env["GIT_CONFIG_VALUE_0"] =
          "!f() { test \"$1\" = get && echo username=x-access-token && echo \"password=$GH_TOKEN\"; }; f";
      env["GIT_CONFIG_KEY_1"] = "url.https://github.com/.insteadOf";
      env["GIT_CONFIG_VALUE_1"] = "git@github.com:";
      env["GIT_CONFIG_KEY_2"] = "url.https://github.com/.pushInsteadOf";
      env["GIT_CONFIG_VALUE_2"] = "ssh://git@github.com/";
    }
  }

  PolicyOptions po;
  po.in = w.path.string();
  po.harness = o.harness;
  po.profile = config.value().profile;
  po.command = o.command;
  if (o.offline) {
    po.offline = true;
  } else if (agent) {
    // An agent keeps its own network rules.
  } else if (config.value().has_allow) {
    po.allow = config.value().allow;  // the project narrowed the network to these hosts
  } else {
    po.online = true;
  }
  PrepareContext context;
  context.temp_dir = temp.value();
  context.extra_profiles.push_back(ws::workspace_profile(w, git_paths.value(), env));
  context.secret_env = secret_env;
  if (agent)
    context.agent = agents::agent_inputs(agent->paths, agent->config, agent->token, user_home(), self_exe());
  auto prepared = prepare_policy(po, context);
  if (!prepared) return abandon(prepared.error());
  const policy::Policy& policy = prepared.value().policy;
  for (const auto& note : prepared.value().notes) std::fprintf(stderr, "parallex: %s\n", note.c_str());
  if (node && iso.sealed && !policy.may_read(*node))
    env_notes.push_back("PARALLEX_NODE is " + node->string() + ", which the seal does not let the run read");

  json hosts = json::array();
  for (const auto& h : policy.network().hosts) hosts.push_back(h.text());
  json started{{"workspace", w.name},
               {"command", redact([&] {
                  std::string s;
                  for (const auto& a : o.command) s += (s.empty() ? "" : " ") + a;
                  return s;
                }())},
               {"agent", o.agent},
               {"harness", policy.harness()},
               {"sealed", iso.sealed},
               {"run_folder", policy.run_folder().string()},
               {"network", {{"mode", policy::to_string(policy.network().mode)}, {"hosts", hosts}}},
               {"policy_digest", policy.digest()},
               {"github_token", token.has_value()},
               {"parallex_node", env.count("PARALLEX_NODE") ? json(env["PARALLEX_NODE"]) : json()}};
  events.emit("run_started", started);
  for (const auto& n : env_notes) {
    std::fprintf(stderr, "parallex: %s\n", n.c_str());
    events.emit("notice", {{"message", n}, {"kind", "environment"}});
  }

  supervisor::RunRequest request(policy);
  request.argv = o.command;
  request.host_env = host_environment();
  request.cwd = w.path;
  request.runs_dir = agent ? agent->paths.runs() : adhoc_runs_dir();
  request.agent = agent ? agent->config.name : "";
  if (agent && agent->config.decoys) request.decoy_home = agent->paths.home();
  request.sealed = iso.sealed;
  request.record_extra["workspace"] = {{"name", w.name},          {"branch", w.branch},
                                       {"path", w.path.string()}, {"project", p.root.string()},
                                       {"base", w.base},          {"base_commit", w.base_commit}};
  std::vector<std::string> extra_notices = iso.notices;
  extra_notices.insert(extra_notices.end(), env_notes.begin(), env_notes.end());
  request.on_finish = [extra_notices, path = w.path](json& record) {
    // Notes about .git/hooks and .git/config under the worktree's gitfile are
    // moot (see below): left out of the record too.
    const std::string gitfile_prefix = (path / ".git").string() + "/";
    json notices = json::array();
    for (const auto& n : record.value("notices", json::array()))
      if (!n.is_string() || n.get<std::string>().rfind(gitfile_prefix, 0) != 0) notices.push_back(n);
    for (const auto& n : extra_notices) notices.push_back(n);
    record["notices"] = notices;
    if (auto changes = ws::workspace_changes(path)) record["changed_files"] = changes.value();
  };
  std::fflush(stdout);
  auto outcome = supervisor::run(std::move(request));
  if (!outcome) return fail(events, outcome.error());
  const auto& out = outcome.value();
  // A worktree's .git is a file, bound read-only: nothing can be made under
  // it, so the default profile's .git/hooks and .git/config entries do not apply.
  const std::string gitfile_prefix = (w.path / ".git").string() + "/";
  for (const auto& n : out.notices) {
    if (n.rfind("unsealed:", 0) == 0) continue;  // said in the notice above
    if (n.rfind(gitfile_prefix, 0) == 0) continue;
    std::fprintf(stderr, "parallex: %s\n", redact(n).c_str());
    events.emit("notice", {{"message", redact(n)}, {"kind", "seal"}});
  }
  for (auto& refused : refused_from_log(out.record_dir / "proxy.jsonl"))
    events.emit("network_refused", refused);

  json ended{{"workspace", w.name},
             {"run_id", out.run_id},
             {"record", out.record_dir.string()},
             {"exit_status", out.exit_status}};
  auto after = ws::find_workspace(p, w.name);
  if (after) {
    ended["changed_files"] = after.value().changes;
    ended["head_commit"] = after.value().head_commit;
    ended["ahead"] = after.value().ahead ? json(*after.value().ahead) : json();
    ended["behind"] = after.value().behind ? json(*after.value().behind) : json();
  }
  events.emit("run_ended", ended);
  std::fprintf(stderr,
               "parallex: workspace %s: %zu uncommitted change(s)%s; `parallex workspace rm %s` removes it\n",
               w.name.c_str(), after ? after.value().changes.size() : 0,
               after && after.value().ahead && *after.value().ahead
                   ? (", " + std::to_string(*after.value().ahead) + " commit(s) on " + w.branch).c_str()
                   : "",
               w.name.c_str());
  return out.exit_status;
}

}  // namespace px::cli::workspace_cmd
