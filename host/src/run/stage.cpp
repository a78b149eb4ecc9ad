// The run stage: prepare_run() in the order its decisions depend on each
// other, then execute(). Each step is one call in prepare_run.
#include "run/stage.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "agents/git_config.hpp"
#include "agents/repo.hpp"
#include "agents/run_inputs.hpp"
#include "agents/store.hpp"
#include "agents/token.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "killswitch/pids_limit.hpp"
#include "run/command.hpp"
#include "run/compose_request.hpp"
#include "run/env_paths.hpp"
#include "run/git_paths.hpp"
#include "run/opener_protocol.hpp"
#include "run/private_dir.hpp"

namespace px::run {

namespace {

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
  return Agent{std::move(paths), std::move(config), std::move(token)};
}

// What no accepted weaker seal goes without, by the guarantees' ids (a
// backend that names neither, as macOS's, has its own floor): something that
// keeps the run out of the files it was not granted (Landlock, or the private
// view of a mount namespace), and seccomp. Empty when both hold; else the
// refusal, naming what is missing and the setting that would give it.
std::string below_the_floor(const std::vector<backend::Guarantee>& guarantees) {
  const backend::Guarantee *landlock = nullptr, *mounts = nullptr, *seccomp = nullptr;
  for (const auto& g : guarantees) {
    if (g.id == "landlock.fs") landlock = &g;
    if (g.id == "namespaces.mount") mounts = &g;
    if (g.id == "seccomp") seccomp = &g;
  }
  std::string why;
  if (landlock && mounts && !landlock->enforced && !mounts->enforced)
    why = "neither Landlock (" + landlock->detail + ") nor a mount namespace (" + mounts->detail +
          "): nothing would keep the run out of the files it was not granted. Landlock needs Linux 5.13 or "
          "later with landlock in the kernel's lsm= boot parameter, and a seccomp profile that lets the "
          "landlock_create_ruleset, landlock_add_rule and landlock_restrict_self calls through (the "
          "defaults of Docker, Podman and Kubernetes' RuntimeDefault do); or give the container the full "
          "seal's settings (`parallex check` prints them; `parallex kube --seal full` renders them)";
  if (seccomp && !seccomp->enforced)
    why += (why.empty() ? "" : "; and ") + std::string("no seccomp (") + seccomp->detail +
           "): nothing would refuse ptrace, new namespaces, raw sockets or keystroke injection. The kernel "
           "needs CONFIG_SECCOMP_FILTER, and the container's seccomp profile must let the seccomp call "
           "through (the defaults of Docker, Podman and Kubernetes' RuntimeDefault do)";
  return why.empty() ? why
                     : "refusing to run, even with the weaker seal accepted: the seal would have " + why;
}

// The seal's level, decided once: the user's choice of no seal, else what
// the sealing backend guarantees here against what a run requires.
struct SealChoice {
  backend::Backend* backend = nullptr;
  SealLevel level = SealLevel::full;
  std::vector<Notice> notices;
};

Result<SealChoice> choose_seal(const RunInputs& in) {
  SealChoice c;
  if (in.options.unsealed) {
    c.backend = &backend::none_backend();
    c.level = SealLevel::none;
    c.notices.push_back({NoticeKind::unsealed, unsealed_notice(in.unsealed_because)});
    return c;
  }
  c.backend = &backend::sealing_backend();
  const auto guarantees = killswitch::seal_guarantees(*c.backend, backend::Backend::Probe::quick);
  const std::string missing = missing_guarantees(guarantees);
  if (missing.empty()) return c;
  if (!in.options.allow_weaker_seal)
    return Error::unsupported(
        "refusing to run: the seal would lack " + missing +
        ". See `parallex check`; pass --allow-weaker-seal to run with a weaker seal anyway");
  if (const std::string floor = below_the_floor(guarantees); !floor.empty()) return Error::unsupported(floor);
  c.level = SealLevel::weaker;
  c.notices.push_back(
      {NoticeKind::weaker_seal, "weaker seal (accepted with --allow-weaker-seal): it lacks " + missing});
  return c;
}

// Removes the run's private dir unless the plan took it over.
struct PrivateDirGuard {
  fs::path dir;
  ~PrivateDirGuard() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

}  // namespace

fs::path adhoc_runs_dir() {
  return parallex_state_dir() / "runs";
}

std::string unsealed_notice(const std::string& because) {
  return "UNSEALED: this run is not confined; it can read and write what you can" +
         (because.empty() ? std::string() : " (" + because + ")");
}

Status check_options(const RunOptions& options) {
  if (options.profile) PX_TRY(policy::load_profile(*options.profile));
  std::vector<Notice> notices;
  for (const auto& g : options.grants) PX_TRY(parse_grant(g, notices));
  return ok();
}

Status check_seal(const RunOptions& options) {
  RunInputs in;
  in.options = options;
  PX_TRY(choose_seal(in));
  return ok();
}

std::string missing_guarantees(const std::vector<backend::Guarantee>& guarantees) {
  std::string missing;
  for (const auto& g : guarantees)
    if (g.required && !g.enforced) missing += (missing.empty() ? "" : "; ") + g.name + " (" + g.detail + ")";
  return missing;
}

Result<ComposedPolicy> compose_run_policy(const RunOptions& options, const std::vector<std::string>& command,
                                          const std::string& agent_name) {
  ComposeRequest request;
  request.options = options;
  request.command = command;
  request.temp_dir = parallex_runtime_dir() / "runs-private/RUN/tmp";
  if (!agent_name.empty()) {
    PX_TRY_ASSIGN(auto agent, load_agent(agent_name));
    request.agent = agents::agent_inputs(agent.paths, agent.config, agent.token, user_home());
    if (agent.token)
      request.default_credentials.push_back(agents::github_credential(agent.paths, agent.config));
  }
  return compose_policy(request);
}

Result<PreparedRun> prepare_run(RunInputs in) {
  if (in.command.empty())
    return Error::invalid("give the command to run after `--`, e.g. `parallex run -- make test`");

  // 1. The agent, when the run is one's: its store, rules and token.
  std::optional<Agent> agent;
  if (!in.agent.empty()) {
    PX_TRY_ASSIGN(auto loaded, load_agent(in.agent));
    agent = std::move(loaded);
  }
  const fs::path self = parallex_executable();

  // 2. The seal's level (and with it the backend).
  PX_TRY_ASSIGN(auto seal, choose_seal(in));

  // 3. The run's private dir: its temp dir inside it.
  PX_TRY_ASSIGN(auto made_private, make_private_dir());
  const std::optional<fs::path> private_dir = made_private.path;
  PrivateDirGuard guard{*private_dir};

  // 4. The policy: profiles, agent, harness plugin, flags.
  ComposeRequest request;
  request.options = in.options;
  request.command = in.command;
  request.temp_dir = *private_dir / "tmp";
  request.opener_dir = opener_dir(*private_dir);
  request.extra_profiles = in.extra_profiles;
  request.secret_env = in.secret_env;
  if (agent) request.agent = agents::agent_inputs(agent->paths, agent->config, agent->token, user_home());
  // Credentials parallex holds, brokered by default: the front door's and the
  // agent's own GitHub token. The Policy names their holder; the plan keeps
  // the secrets for the supervisor's broker.
  std::vector<HeldCredential> held = std::move(in.held_credentials);
  if (agent && agent->token)
    held.push_back({agents::github_credential(agent->paths, agent->config), *agent->token});
  for (const auto& h : held) request.default_credentials.push_back(h.credential);
  PX_TRY_ASSIGN(auto composed, compose_policy(request));

  PreparedRun out{RunPlan(composed.policy), seal.backend};
  RunPlan& plan = out.plan;
  plan.argv = in.command;
  plan.seal = seal.level;
  plan.allow_weaker_seal = in.options.allow_weaker_seal;
  plan.backend = seal.backend->name();
  plan.notices = seal.notices;
  for (auto& n : composed.notices) plan.notices.push_back(std::move(n));
  plan.dirs = {in.runs_dir.empty() ? (agent ? agent->paths.runs() : adhoc_runs_dir()) : in.runs_dir,
               *private_dir, *private_dir / "tmp", made_private.lock};
  plan.cwd = in.cwd ? *in.cwd : plan.policy.run_folder();
  plan.record = std::move(in.record);
  for (auto& h : held) plan.held_secrets[h.credential.spec.name] = std::move(h.secret);
  plan.record.options = in.options.describe();
  plan.on_finish = std::move(in.on_finish);

  // 5. The command's environment: the host's, filtered by the policy, plus
  // what the front door sets.
  const auto host_env = in.host_env.empty() ? process_environment() : in.host_env;
  plan.env = plan.policy.environment().apply(host_env);
  for (const auto& [k, v] : in.extra_env) plan.env[k] = v;
  if (seal.level != SealLevel::none) {
    std::set<std::string> given;  // passed with --env: said by the policy's composition
    for (const auto& spec : in.options.env) given.insert(spec.substr(0, spec.find('=')));
    if (request.agent)
      for (const auto& spec : request.agent->passed_env) given.insert(spec.substr(0, spec.find('=')));
    say_unreadable_kept_paths(plan.env, host_env, given, plan.policy, plan.notices);
  }
  // .git/config stays read-only in a sealed run, so `git submodule update
  // --init` gets the registrations it would write there from git's own
  // variables, for this run only (run/git_paths.hpp).
  const fs::path repo_config = plan.policy.run_folder() / ".git/config";
  if (seal.level != SealLevel::none &&
      std::any_of(plan.policy.read_only().begin(), plan.policy.read_only().end(),
                  [&](const policy::ReadOnlyPath& r) { return r.path == repo_config; }))
    add_git_config_entries(plan.env, submodule_registrations(plan.policy.run_folder()));
  // An explicit weakening (dangerously_*) is said at the start of the run.
  for (const auto& w : plan.policy.weakenings())
    plan.notices.push_back({NoticeKind::weaker_seal, "WEAKENED: " + w});

  // 6. The command itself, on the run's PATH; readable under the policy
  // when sealed, with advice that was checked against the policy.
  const auto path_it = plan.env.find("PATH");
  const std::string path_env = path_it == plan.env.end() ? "/usr/local/bin:/usr/bin:/bin" : path_it->second;
  GrantCheck check = [&](const fs::path& grant, const std::vector<fs::path>& paths) {
    ComposeRequest with = request;
    with.plugins = composed.plugins;
    with.options.grants.push_back(grant.string());
    auto trial = compose_policy(with);
    if (!trial) return false;
    for (const auto& p : paths)
      if (!trial.value().policy.may_read(p)) return false;
    return true;
  };
  auto resolved = resolve_command(in.command.front(), path_env,
                                  seal.level == SealLevel::none ? nullptr : &plan.policy, check);
  plan.executable = resolved.path;
  plan.command_problem = resolved.problem;

  // 7. An agent's run: its git identity, its repository's state, and the
  // snapshot of its home, last, when nothing else can fail.
  if (agent) {
    plan.agent = agent->config.name;
    if (agent->config.decoys) plan.decoy_home = agent->paths.home();
    PX_TRY(agents::write_git_identity(agent->paths, agent->config, self));
    if (agent->config.share_harness_config) {
      PX_TRY_ASSIGN(auto shared, agents::link_shared_harness_config(agent->paths, user_home()));
      for (auto& note : shared) plan.notices.push_back({NoticeKind::seal, std::move(note)});
    }
    const fs::path dir = plan.policy.run_folder();
    if (auto keys = agents::config_keys_with_tokens(dir)) {
      for (const auto& key : keys.value())
        plan.notices.push_back(
            {NoticeKind::alert, "the repository's own git config holds a credential in " + key +
                                    "; the agent's git uses it there, as git does. Move it to a credential "
                                    "helper to keep it from the agent"});
    } else {
      plan.notices.push_back({NoticeKind::alert, keys.error().message});
    }
    if (auto refs = agents::repository_refs(dir); refs && refs.value()) {
      plan.record.repository = refs.value()->value("repository", "");
      plan.record.refs_start = git_refs_from_json((*refs.value())["refs"]);
      plan.record.head_start = refs.value()->value("head_commit", "");
      auto previous = std::move(plan.on_finish);
      plan.on_finish = [dir, previous](RunRecord& record) {
        if (auto end = agents::repository_refs(dir); end && end.value()) {
          record.refs_end = git_refs_from_json((*end.value())["refs"]);
          record.head_end = end.value()->value("head_commit", "");
        }
        if (previous) previous(record);
      };
    } else if (!refs) {
      plan.notices.push_back({NoticeKind::alert, refs.error().message});
    }
    if (seal.level == SealLevel::none) {
      std::vector<policy::DeclaredHomeFiles> declared;
      for (const auto& plugin : composed.plugins->plugins()) {
        auto files = plugin->home_files(request.platform);
        if (files)
          declared.push_back(std::move(files).value());
        else if (!plugin->broken())
          plan.notices.push_back({NoticeKind::alert, files.error().message + " (its files are not checked)"});
      }
      for (const auto& f : agents::command_running_settings(agent->paths.home(), declared))
        plan.notices.push_back(
            {NoticeKind::alert,
             redact(f) + " can make the harness run commands; unsealed they run unconfined, as you. "
                         "Review it if a sealed run may have written it"});
    }
    if (!plan.command_problem) {
      const std::string label = "before run of " + redact(in.command.front());
      auto snap = agents::take_pre_run_snapshot(agent->paths, label);
      if (!snap)
        return Error{snap.error().kind,
                     "the snapshot before the run failed, so nothing was run: " + snap.error().message};
      if (snap.value().taken) plan.record.snapshot = snap.value().id;
      if (!snap.value().note.empty()) plan.notices.push_back({NoticeKind::seal, snap.value().note});
    }
  }
  guard.dir.clear();  // the run's end removes it
  return out;
}

Result<supervisor::RunResult> execute(PreparedRun prepared, const supervisor::RunObserver& observer) {
  if (!prepared.backend) return Error::internal("a run was prepared without a backend");
  return supervisor::run(std::move(prepared.plan), *prepared.backend, observer);
}

}  // namespace px::run
