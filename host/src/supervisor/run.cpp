// supervisor::run — one run, end to end. The order here is the product's
// promise: the record dir exists before anything starts, the proxy exists
// before the command can use the network, and the record is written whatever
// happened to the command.
#include "supervisor/run.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <random>

#include "backend/linux/launch.hpp"
#include "common/clock.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "policy/policy_json.hpp"
#include "proxy/proxy.hpp"
#include "supervisor/decoys.hpp"
#include "supervisor/global_pause.hpp"
#include "supervisor/run_control.hpp"
#include "supervisor/run_network.hpp"
#include "supervisor/unsealed_launch.hpp"

namespace px::supervisor {

namespace {

Status write_record(const fs::path& dir, const nlohmann::json& record) {
  const fs::path tmp = dir / "run.json.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Error::io("cannot write " + tmp.string(), errno);
    out << record.dump(2) << "\n";
    if (!out) return Error::io("cannot write " + tmp.string(), errno);
  }
  std::error_code ec;
  fs::rename(tmp, dir / "run.json", ec);
  if (ec) return Error::io("cannot write " + (dir / "run.json").string(), ec.value());
  return ok();
}

// {"collected_from": [...], "not_collected": [...], "refused": [{call, process, count}], "more": N}
nlohmann::json refusals_json(const seal::Refusals& refusals) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& r : refusals.items)
    items.push_back(
        {{"source", r.source}, {"call", redact(r.call)}, {"process", redact(r.process)}, {"count", r.count}});
  return {{"collected_from", refusals.collected_from},
          {"not_collected", refusals.not_collected},
          {"refused", items},
          {"more", refusals.more}};
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

std::string new_run_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(rd() & 0xffff));
  return std::string(stamp) + "-" + suffix;
}

Result<RunOutcome> run(RunRequest r) {
  if (r.argv.empty()) return Error::invalid("no command to run: give it after --");
  RunOutcome outcome;
  outcome.run_id = new_run_id();
  outcome.record_dir = r.runs_dir / outcome.run_id;
  std::error_code ec;
  fs::create_directories(outcome.record_dir, ec);
  if (ec)
    return Error::io("cannot create the run's record folder " + outcome.record_dir.string(), ec.value());
  ::chmod(outcome.record_dir.c_str(), 0700);
  fs::create_directories(r.policy.temp_dir(), ec);
  if (ec) return Error::io("cannot create the run's temp dir " + r.policy.temp_dir().string(), ec.value());
  ::chmod(r.policy.temp_dir().c_str(), 0700);

  const policy::Policy& policy = r.policy;
  // Harness state dirs that do not exist yet: made now, outside the seal, so
  // the grant can cover them (the builder checked they lie in the run's home).
  for (const auto& g : policy.grants()) {
    if (!g.create_if_missing || fs::exists(g.path, ec)) continue;
    fs::create_directories(g.path, ec);
    if (ec)
      return Error::io(
          "cannot create the harness state dir " + g.path.string() + " (" + g.origin.describe() + ")",
          ec.value());
    ::chmod(g.path.c_str(), 0700);
  }
  // Published ports need the run's network even when it may reach nothing outside.
  const bool wants_network =
      policy.network().mode != policy::NetworkMode::offline || !policy.network().published.empty();
  const fs::path proxy_log = outcome.record_dir / "proxy.jsonl";
  std::string password;
  if (wants_network) {
    PX_TRY_ASSIGN(password, proxy::generate_password());
    register_secret(password);
  }

  nlohmann::json record{{"id", outcome.run_id},
                        {"agent", r.agent},
                        {"command", redact(join(r.argv))},
                        {"argv", nlohmann::json::array()},
                        {"harness", policy.harness()},
                        {"run_folder", policy.run_folder().string()},
                        {"sealed", r.sealed},
                        {"network", policy::to_string(policy.network().mode)},
                        {"policy_digest", policy.digest()},
                        {"policy", policy::to_json(policy)},
                        {"started_at", iso_utc_now()},
                        {"proxy_log", wants_network ? proxy_log.string() : ""}};
  for (const auto& a : r.argv) record["argv"].push_back(redact(a));
  for (auto& [k, v] : r.record_extra.items()) record[k] = v;
  // A record exists from the start, so a crash of the supervisor still leaves a trace.
  PX_TRY(write_record(outcome.record_dir, record));

  // The kill switch: the run is registered (and paused at once if a pause is
  // on) before anything starts. The proxy may start later than a pause comes
  // in, so the cut is remembered and applied when it does.
  std::mutex proxy_mutex;
  std::unique_ptr<proxy::ProxyServer> server;
  bool network_cut = false;
  supervisor::RunHooks hooks;
  hooks.cut_network = [&] {
    std::lock_guard lock(proxy_mutex);
    network_cut = true;
    if (server) server->cut();
  };
  hooks.restore_network = [&] {
    std::lock_guard lock(proxy_mutex);
    network_cut = false;
    if (server) server->restore();
  };
  hooks.notice = [](const std::string& message) { std::fprintf(stderr, "parallex: %s\n", message.c_str()); };
  RunControlOptions control_options;
  control_options.run_id = outcome.run_id;
  control_options.agent = r.agent;
  control_options.command = r.argv;
  control_options.hooks = hooks;
  PX_TRY_ASSIGN(auto control, RunControl::start(std::move(control_options)));
  PX_TRY(wait_while_globally_paused(parallex_runtime_dir(), hooks.notice));
  outcome.notices.push_back(control->mechanism_note());

  // Landlock cannot refuse one name in a writable folder, so a `git init` in a
  // run folder that had no repository is caught after the run instead: its
  // hooks and config were written by the run, and git would run them for you.
  const fs::path run_git = policy.run_folder() / ".git";
  const bool had_git = fs::symlink_status(run_git, ec).type() != fs::file_type::not_found;

  // Decoys are watched from before the command starts until it has ended.
  std::unique_ptr<DecoyWatch> decoy_watch;
  // What the run did that the user must hear of at its end (printed here, kept
  // in the record's notices for reports).
  std::vector<std::string> alerts;
  if (!r.decoy_home.empty()) {
    RunControl* ctl = control.get();
    auto belongs = [ctl](pid_t pid) { return ctl->owns_process(pid); };
    auto watch = DecoyWatch::start(r.decoy_home, belongs);
    if (watch) {
      decoy_watch = std::move(watch).value();
      record["decoys"] = {{"method", decoy_watch->method()}, {"watched", decoy_watch->watched()}};
    } else {
      hooks.notice("the decoy credentials are not watched in this run: " + watch.error().message);
      record["decoys"] = {{"error", redact(watch.error().message)}};
    }
  }

  seal::EnvMap env = policy.environment().apply(r.host_env);
  for (const auto& [k, v] : control->child_environment()) env[k] = v;
  // The harness's own sandbox cannot nest inside ours: its plugin's switches
  // (shown by `policy show`) go in as variables or as arguments after argv[0].
  for (const auto& n : policy.nested_sandbox()) {
    if (n.kind == policy::NestedSandboxSwitch::Kind::env) {
      env[n.name] = n.value;
    } else if (r.sealed) {
      r.argv.insert(r.argv.begin() + 1, n.value);
    }
  }
  // Who the run is, for tools inside it (the MCP server's whoami): facts the
  // run may know about itself, never a secret.
  env["PARALLEX_RUN_ID"] = outcome.run_id;
  if (!r.agent.empty()) env["PARALLEX_AGENT"] = r.agent;
  env["PARALLEX_NETWORK"] = policy::to_string(policy.network().mode);
  if (policy.network().mode == policy::NetworkMode::allowlist) {
    std::string hosts;
    for (const auto& h : policy.network().hosts) hosts += (hosts.empty() ? "" : ",") + h.text();
    env["PARALLEX_ALLOWED_HOSTS"] = hosts;
  }
  env["PARALLEX_SEALED"] = r.sealed ? "1" : "0";
  Result<int> status = Error::internal("the run did not start");

  if (r.sealed) {
    auto exe = seal::resolve_command(r.argv[0], env, policy);
    if (!exe) {
      std::fprintf(stderr, "parallex: %s\n", redact(exe.error().message).c_str());
      status = exe.error().kind == ErrorKind::not_found ? 127 : 126;
    } else {
      seal::LaunchSpec spec;
      spec.policy = &policy;
      spec.executable = exe.value();
      spec.argv = r.argv;
      spec.env = env;
      spec.cwd = r.cwd.empty() ? policy.run_folder() : r.cwd;
      spec.allow_weaker_seal = r.accept_weaker_seal;
      spec.want_proxy_socket = wants_network;
      if (wants_network) {
        spec.on_proxy_socket = [&](seal::NetworkHandOff handoff) -> Result<seal::EnvMap> {
          const std::uint16_t port = handoff.proxy_port;
          PX_TRY_ASSIGN(auto started, start_sealed_proxy(policy, password, proxy_log, std::move(handoff)));
          std::lock_guard lock(proxy_mutex);
          server = std::move(started);
          if (network_cut) server->cut();
          seal::EnvMap extra;
          for (auto& [k, v] : proxy::proxy_environment(port, password)) extra[k] = v;
          return extra;
        };
      }
      spec.cgroup_fd = control->cgroup_fd();
      auto launched = [&]() -> Result<seal::LaunchResult> {
        PX_TRY_ASSIGN(auto process, seal::spawn(spec));
        if (auto attached = control->attach(process.pid, spec.cgroup_fd >= 0); !attached)
          hooks.notice("the kill switch does not track this run: " + attached.error().message);
        return seal::wait(process);
      }();
      if (!launched) {
        record["setup_error"] = redact(launched.error().message);
        status = launched.error();
      } else {
        if (!launched.value().message.empty())
          std::fprintf(stderr, "parallex: %s\n", redact(launched.value().message).c_str());
        outcome.notices = launched.value().notes;
        status = launched.value().exit_code;
        const seal::Refusals& refusals = launched.value().refusals;
        record["seal_refusals"] = refusals_json(refusals);
        if (refusals.total() > 0) {
          const std::string line = "the seal refused " + std::to_string(refusals.total()) + " request" +
                                   (refusals.total() == 1 ? "" : "s") + ": " + refusals.summary();
          outcome.seal_refusals = redact(line);
          alerts.push_back(outcome.seal_refusals);
          std::fprintf(stderr, "parallex: %s\n", outcome.seal_refusals.c_str());
        }
      }
    }
  } else {
    std::fprintf(
        stderr, "parallex: UNSEALED: this run is not confined; it can read and write what you can%s\n",
        wants_network ? " (its network still goes to the proxy for tools that honour proxy variables)" : "");
    outcome.notices.push_back("unsealed: no filesystem, process or network confinement");
    if (wants_network) {
      auto started =
          proxy::ProxyServer::listen(run_proxy_config(policy, password, proxy_log), "127.0.0.1", 0);
      if (!started) return started.error();
      server = std::move(started).value();
      for (auto& [k, v] : proxy::proxy_environment(server->port(), password)) env[k] = v;
    }
    status = run_unsealed(r.argv, env, r.cwd.empty() ? policy.run_folder() : r.cwd, control->cgroup_fd());
  }

  if (decoy_watch) {
    nlohmann::json hits = nlohmann::json::array();
    for (const auto& hit : decoy_watch->stop()) {
      hits.push_back(to_json(hit));
      std::string line = "DECOY " + hit.event + ": " + hit.path.string() +
                         (hit.process.empty() ? " (process unknown)" : " by " + hit.process);
      outcome.decoy_hits.push_back(redact(line));
      alerts.push_back(outcome.decoy_hits.back());
      std::fprintf(stderr, "parallex: %s\n", outcome.decoy_hits.back().c_str());
    }
    record["decoy_hits"] = hits;
  }
  control->finish();
  record["kill_switch"] = control->record();
  if (server) {
    server->stop();
    for (const auto& h : server->refused_hosts())
      outcome.refused_hosts.push_back(h.host + ":" + std::to_string(h.port));
    const std::string refused = proxy::format_refused(server->refused_hosts());
    if (!refused.empty()) std::fprintf(stderr, "%s", refused.c_str());
  }
  if (!had_git && fs::symlink_status(run_git, ec).type() != fs::file_type::not_found) {
    const std::string made = "the run made a git repository in " + policy.run_folder().string() +
                             " (.git was not there before): its hooks and config were written by the run and "
                             "git would run them for you; review or remove " +
                             run_git.string();
    alerts.push_back(made);
    record["git_repository_created"] = run_git.string();
    std::fprintf(stderr, "parallex: WARNING: %s\n", made.c_str());
  }
  record["ended_at"] = iso_utc_now();
  record["notices"] = outcome.notices;
  for (const auto& a : alerts) record["notices"].push_back(a);
  record["refused_hosts"] = outcome.refused_hosts;
  if (status) {
    outcome.exit_status = status.value();
    record["exit_status"] = outcome.exit_status;
  } else {
    record["exit_status"] = nullptr;
  }
  if (r.on_finish) r.on_finish(record);
  if (auto written = write_record(outcome.record_dir, record); !written)
    spdlog::error("{}", written.error().message);
  // The private temp dir lives as long as the run.
  fs::remove_all(policy.temp_dir(), ec);
  if (!status) return status.error();
  return outcome;
}

}  // namespace px::supervisor
