// `parallex agent run NAME [--in DIR] [--harness X] [--profile P] [--unsealed] -- CMD...`:
// runs a command as the agent (its home, git, gh and harness config), through
// its network rules, after a snapshot of its home. The exit status is the command's.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <random>

#include "agents/git_config.hpp"
#include "agents/launch.hpp"
#include "agents/repo.hpp"
#include "agents/run_inputs.hpp"
#include "agents/store.hpp"
#include "agents/token.hpp"
#include "cli/agents_cli.hpp"
#include "cli/output.hpp"
#include "cli/policy_options.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"

extern char** environ;

namespace px::cli::agent_cmd {

namespace {

struct RunOptions {
  std::string name;
  std::string in;
  std::optional<std::string> harness, profile;
  bool unsealed = false;
  bool accept_weaker_seal = false;
  std::vector<std::string> command;
};

std::map<std::string, std::string> host_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string s = *e;
    const auto eq = s.find('=');
    if (eq != std::string::npos) env.emplace(s.substr(0, eq), s.substr(eq + 1));
  }
  return env;
}

// The run's private temp dir on the host; removed when the run ends.
Result<fs::path> make_temp_dir() {
  const fs::path base = parallex_runtime_dir();
  std::error_code ec;
  fs::create_directories(base, ec);
  ::chmod(base.c_str(), 0700);
  std::string tmpl = (base / "agent-run-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return Error::io("create a temporary folder in " + base.string(), errno);
  return fs::path(tmpl);
}

int do_run(const RunOptions& o) {
  if (o.command.empty())
    return report_error(Error::invalid("Give the command to run after `--`, e.g. -- claude."));
  const fs::path root = agents::default_agents_root();
  auto paths = agents::find_agent(root, o.name);
  if (!paths) return report_error(paths.error());
  const auto& p = paths.value();
  auto config = agents::load_config(p);
  if (!config) return report_error(config.error());
  const auto& c = config.value();
  if (auto s = agents::check_layout(p); !s) return report_error(s.error());
  auto token = agents::load_token(p.gh());
  if (!token) return report_error(token.error());
  const fs::path exe = self_exe();
  // Its git config is Parallex's own file: rebuilt from agent.yaml before each run.
  if (auto s = agents::write_git_identity(p, c, exe); !s) return report_error(s.error());
  if (c.share_harness_config) {
    auto linked = agents::link_shared_harness_config(p, user_home());
    if (!linked) return report_error(linked.error());
  }

  auto temp = make_temp_dir();
  if (!temp) return report_error(temp.error());
  struct RemoveTemp {
    fs::path dir;
    ~RemoveTemp() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_temp{temp.value()};

  PolicyOptions po;
  po.harness = o.harness;
  po.profile = o.profile;
  po.in = o.in;
  po.command = o.command;
  PrepareContext context;
  context.platform = this_platform();
  context.temp_dir = temp.value() / "tmp";
  std::error_code ec;
  fs::create_directories(context.temp_dir, ec);
  context.agent = agents::agent_inputs(p, c, token.value(), user_home(), exe);
  auto prepared = prepare_policy(po, context);
  if (!prepared) return report_error(prepared.error());
  const auto& policy = prepared.value().policy;
  for (const auto& note : prepared.value().notes) std::fprintf(stderr, "parallex: %s\n", note.c_str());

  const fs::path dir = policy.run_folder();
  auto token_keys = agents::config_keys_with_tokens(dir);
  if (token_keys)
    for (const auto& key : token_keys.value())
      std::fprintf(
          stderr,
          "parallex: warning: the repository's own git config holds a credential in %s; the agent's git "
          "uses it there, as git does. Move it to a credential helper to keep it from the agent.\n",
          key.c_str());
  else
    std::fprintf(stderr, "parallex: warning: %s\n", token_keys.error().message.c_str());

  nlohmann::json extra = nlohmann::json::object();
  if (auto refs = agents::repository_refs(dir); refs && refs.value()) {
    extra["repository"] = refs.value()->value("repository", "");
    extra["refs_start"] = (*refs.value())["refs"];
    extra["head_start"] = refs.value()->value("head_commit", "");
  } else if (!refs) {
    std::fprintf(stderr, "parallex: warning: %s\n", refs.error().message.c_str());
  }

  if (o.unsealed)
    for (const auto& f : agents::command_running_settings(p))
      std::fprintf(
          stderr,
          "parallex: warning: %s can make the harness run commands (hooks, MCP servers); unsealed they run "
          "unconfined, as you. Review it if a sealed run may have written it.\n",
          f.c_str());

  const std::string label = "before run of " + redact(o.command.front());
  auto snap = agents::take_pre_run_snapshot(p, label);
  if (!snap)
    return report_error(Error{snap.error().kind, "The snapshot before the run failed, so nothing was run: " +
                                                     snap.error().message});
  if (snap.value().taken) extra["snapshot"] = snap.value().id;
  if (!snap.value().note.empty()) std::fprintf(stderr, "parallex: %s\n", snap.value().note.c_str());

  supervisor::RunRequest request(policy);
  request.argv = o.command;
  request.host_env = host_environment();
  request.cwd = dir;
  request.agent = c.name;
  request.runs_dir = p.runs();
  request.sealed = !o.unsealed;
  request.accept_weaker_seal = o.accept_weaker_seal;
  if (c.decoys) request.decoy_home = p.home();
  request.record_extra = extra;
  request.on_finish = [dir](nlohmann::json& record) {
    if (auto refs = agents::repository_refs(dir); refs && refs.value()) {
      record["refs_end"] = (*refs.value())["refs"];
      record["head_end"] = refs.value()->value("head_commit", "");
    }
  };
  auto outcome = agents::launch(std::move(request));
  if (!outcome) return report_error(outcome.error());
  // The supervisor has said "UNSEALED" in its one line already.
  for (const auto& n : outcome.value().notices)
    if (n.rfind("unsealed:", 0) != 0) std::fprintf(stderr, "parallex: %s\n", redact(n).c_str());
  return outcome.value().exit_status;
}

}  // namespace

Action setup_run(CLI::App& s) {
  auto o = std::make_shared<RunOptions>();
  s.add_option("name", o->name, "The agent")->required();
  s.add_option("--in", o->in, "The folder it works in (default: the current directory)");
  s.add_option("--harness", o->harness, "The harness plugin (default: detected from the command)");
  s.add_option("--profile", o->profile, "A profile over the default one (name or YAML file)");
  s.add_flag("--unsealed", o->unsealed, "Run without the seal (it can then read your files)");
  s.add_flag("--accept-weaker-seal", o->accept_weaker_seal, "Run even where the seal lacks a guarantee");
  s.add_option("command", o->command, "The command, after --");
  return [o] { return do_run(*o); };
}

}  // namespace px::cli::agent_cmd
