// supervisor::run — one run, end to end: its record, then its services (the
// kill switch, the credential broker, the harness's home, the protected
// files, the proxy, the decoys: each a class of its own in this folder with
// start, on_started and stop into the record), in the order carry_out()
// names them. The order is the product's promise: the
// record exists before anything starts, the kill switch holds the run before
// its first process exists, every brokered secret is read before the seal
// (or nothing starts), the proxy exists before the command can use the
// network, and the record is finished whatever happened.
#include "supervisor/run.hpp"

#include <unistd.h>

#include <boost/algorithm/string/join.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <system_error>

#include "common/background.hpp"
#include "common/clock.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "killswitch/global_pause.hpp"
#include "killswitch/run_control.hpp"
#include "policy/policy_json.hpp"
#include "protect/sweep_after_death.hpp"
#include "protect/unswept.hpp"
#include "proxy/proxy.hpp"
#include "run/classify.hpp"
#include "run/events.hpp"
#include "run/private_dir.hpp"
#include "run/record_dir.hpp"
#include "supervisor/decoys.hpp"
#include "supervisor/harness_home.hpp"
#include "supervisor/kill_switch.hpp"
#include "supervisor/protected_files.hpp"
#include "supervisor/run_broker.hpp"
#include "supervisor/run_network.hpp"
#include "supervisor/run_opener.hpp"
#include "supervisor/stop_signals.hpp"

namespace px::supervisor {

namespace {

using run::Notice;
using run::NoticeKind;
using run::RunStatus;

run::SealRefusals seal_refusals(const backend::Refusals& refusals) {
  run::SealRefusals out;
  out.collected_from = refusals.collected_from;
  out.not_collected = refusals.not_collected;
  for (const auto& r : refusals.items)
    out.refused.push_back({r.source, redact(r.call), redact(r.process), r.count});
  out.more = refusals.more;
  return out;
}

// Room held for a record's last write (run::reserve_record_space): a record
// is 30-60 KB (the policy most of it), written next to the one before.
constexpr std::size_t kRecordReserve = 256 * 1024;

// Test-only fault injection, so tests can check that the record is finished
// whatever fails: PARALLEX_TEST_FAIL_AT=STEP makes that set-up step return
// an error; PARALLEX_TEST_THROW_AT=STEP makes it throw what a thread that
// cannot start throws. Either can only make a run fail, never widen one.
void throw_if_injected(const char* step) {
  static const char* at = std::getenv("PARALLEX_TEST_THROW_AT");
  if (at && std::string(at) == step)
    throw std::system_error(EAGAIN, std::generic_category(),
                            std::string("fault thrown at ") + step + " (PARALLEX_TEST_THROW_AT)");
}
Status injected_fault(const char* step) {
  throw_if_injected(step);
  static const char* at = std::getenv("PARALLEX_TEST_FAIL_AT");
  if (at && std::string(at) == step)
    return Error::internal(std::string("fault injected at ") + step + " (PARALLEX_TEST_FAIL_AT)");
  return ok();
}

// One run's state while the supervisor carries it out. Owned by run(); the
// hooks below touch it from the control socket's, the proxy's and the
// signals' threads only through `mu`.
class Run {
 public:
  Run(run::RunPlan plan, backend::Backend& backend, const RunObserver& observer)
      : plan_(std::move(plan)), backend_(backend), observer_(observer) {}

  // ---- the steps, in the order run() calls them ----------------------------

  // The run's id, claimed with its record folder (made by this run alone: an
  // id another run drew in the same second is drawn again), and the record as
  // the plan has it; make_record() fills it in while the seal builds its view.
  Status open_record() {
    PX_TRY(injected_fault("record"));
    PX_TRY_ASSIGN(auto claimed, run::claim_record_dir(plan_.dirs.runs_dir, new_run_id));
    id_ = std::move(claimed.id);
    dir_ = std::move(claimed.dir);
    // The run's event stream (docs/events.md); without it (a full disk) the
    // record still says everything, and `events` reads it from there.
    if (auto log = run::EventLog::open(dir_, id_, plan_.agent)) events_ = std::move(log).value();
    record_ = plan_.record;
    for (const auto& n : plan_.notices) record_.notices.push_back(redacted(n));
    // The policy as the record holds it (most of it: to_json and dump cost
    // 0.3-0.6 ms), made on another thread while the kill switch is set up and
    // the seal planned; taken before the seal's fork (launch()). The Policy
    // does not change from here on.
    policy_text_made_.emplace([&policy = plan_.policy] { return run::policy_text(policy::to_json(policy)); });
    return ok();
  }

  // Once: by the seal's start, or by finish() when the run ended before it.
  Status make_record() {
    if (record_made_) return ok();
    record_made_ = true;
    const policy::Policy& p = plan_.policy;
    run::RunRecord& r = record_;
    r.id = id_;
    r.agent = plan_.agent;
    r.command = redact(boost::algorithm::join(plan_.argv, " "));
    r.argv.clear();
    for (const auto& a : plan_.argv) r.argv.push_back(redact(a));
    r.harness = p.harness();
    r.run_folder = p.run_folder();
    r.seal = plan_.seal;
    r.network = policy::to_string(p.network().mode);
    r.policy_digest = p.digest();
    r.started_at = iso_utc_now();
    r.status = RunStatus::starting;
    r.proxy_log = wants_network() ? dir_ / "proxy.jsonl" : fs::path();
    r.supervisor_pid = ::getpid();
    r.supervisor_start = run::process_start_ticks(r.supervisor_pid);
    // Variables passed on purpose: their names and where from, never a value.
    for (const auto& e : p.environment().pass)
      r.env_passed.push_back(
          {e.pattern, "the caller's environment", plan_.env.count(e.pattern) > 0, e.origin.describe()});
    for (const auto& e : p.environment().set)
      if (e.reason == policy::kSetOnPurpose)
        r.env_passed.push_back({e.name, "a value given", true, e.origin.describe()});
    events_.emit_at(r.started_at, run::event::run_start, run::run_start_fields(r));
    // Room for the record's last write, before anything of the run starts:
    // a run that ran always has its outcome, even when what it did filled
    // the state folder's filesystem; a filesystem already full refuses the
    // run here, saying so.
    if (auto reserved = run::reserve_record_space(dir_, kRecordReserve); !reserved) {
      no_room_ = true;
      return reserved.error();
    }
    return ok();
  }

  // The record's first write comes once the command's first process exists,
  // while it builds its seal and before the command starts (a supervisor that
  // dies earlier has started nothing); finish() writes the last.
  Status write_record() {
    take_policy_text();
    return run::write_record(dir_, record_, policy_text_);
  }
  void take_policy_text() {
    if (policy_text_made_) policy_text_ = policy_text_made_->take();
    policy_text_made_.reset();
  }

  // Held from here on; read on this thread until the seal is forked, then by
  // a thread of their own (start_reading_stop_signals()).
  void stop_on_signals() {
    throw_if_injected("stop-signals");
    stop_ = std::make_unique<StopSignals>([this](int sig) {
      say({NoticeKind::alert, "parallex received " + sigabbrev(sig) + ": ending the run"});
      kill_if_stopped();
    });
  }

  // Kills the run's processes once a stop signal came in. Called by the
  // signals' thread, and again once the command has started (a signal that
  // came while it was being started finds it then). RunControl::kill calls
  // the network hooks (NetworkProxy::cut): no lock of ours is held here.
  void kill_if_stopped() {
    if (!stop_ || !stop_->received()) return;
    if (killswitch::RunControl* control = kill_switch_.control())
      (void)control->kill(sigabbrev(stop_->received()));
  }

  // The services before the seal, in order: the kill switch's cgroup, which
  // the seal is born into; the credential broker (every secret read and
  // checked, or nothing starts); the harness's files in the home; the
  // protected files as they are; the proxy's password. An error ends the run
  // before its command starts (finish() records it).
  Status start_services() {
    PX_TRY(injected_fault("kill-switch"));
    KillSwitch::Hooks hooks;
    hooks.cut_network = [this] { proxy_.cut(); };
    hooks.restore_network = [this] { proxy_.restore(); };
    hooks.network = [this](const nlohmann::json& request, const std::string& by) {
      return proxy_.handle(request, by);
    };
    hooks.say = say_;
    // Frozen, nothing of the run is halfway through a write: what it made at
    // the protected paths is moved aside now, before the user works in the
    // folder while the run waits.
    hooks.frozen = [this] {
      if (files_) files_->sweep_paused();
    };
    hooks.event = [this](const nlohmann::json& op) {
      if (const auto type = run::kill_switch_type(op)) events_.emit(*type, run::kill_switch_fields(op));
    };
    PX_TRY(kill_switch_.start(id_, std::move(hooks), record_));
    lap("kill switch");
    PX_TRY(say_if_globally_paused());
    PX_TRY(injected_fault("state-dirs"));
    PX_TRY(make_state_dirs(plan_.policy));
    PX_TRY(injected_fault("broker"));
    PX_TRY(broker_.start(plan_, dir_, say_, record_));
    lap("broker");
    PX_TRY(injected_fault("home-settings"));
    home_.start(dir_, record_);
    files_ = std::make_unique<ProtectedFiles>(plan_, dir_, say_, [this](const run::Quarantined& q) {
      events_.emit(run::event::file_moved_aside, run::moved_aside_fields(q));
    });
    files_->start();
    lap("protected files");
    opener_.start(plan_.dirs.private_dir);
    return proxy_.start(id_, plan_.agent, say_, &events_);
  }

  // A run that starts while `pause --all` holds is not kept waiting outside
  // the kill switch: it starts paused (attach() freezes it the moment it
  // exists), registered like every run, so `parallex runs` lists it and
  // `kill`, or a stop signal, ends it before its command ran a step. Said first.
  Status say_if_globally_paused() {
    PX_TRY(injected_fault("global-pause"));
    if (auto since = killswitch::global_pause_since(parallex_runtime_dir()))
      say({NoticeKind::alert, "all runs are paused (parallex pause --all, since " + *since +
                                  "): this run starts paused; `parallex resume --all` lets it go on, "
                                  "`parallex kill --all` ends it"});
    return ok();
  }

  Status build_environment() {
    PX_TRY(injected_fault("environment"));
    env_ = plan_.env;
    argv_ = plan_.argv;
    for (const auto& [k, v] : kill_switch_.control()->child_environment()) env_[k] = v;
    // The harness's own sandbox cannot nest inside ours: its plugin's
    // switches go in as variables or as arguments after argv[0]. Unsealed,
    // there is no seal for it to clash with, and nothing may claim the run
    // is sandboxed.
    if (plan_.seal != run::SealLevel::none) {
      for (const auto& n : plan_.policy.nested_sandbox()) {
        if (n.kind == policy::NestedSandboxSwitch::Kind::env)
          env_[n.name] = n.value;
        else
          argv_.insert(argv_.begin() + 1, n.value);
      }
    }
    // Who the run is, for tools inside it (the MCP server's whoami): facts
    // the run may know about itself, never a secret.
    const policy::NetworkRule& net = plan_.policy.network();
    env_["PARALLEX_RUN_ID"] = id_;
    if (!plan_.agent.empty()) env_["PARALLEX_AGENT"] = plan_.agent;
    env_["PARALLEX_NETWORK"] = policy::to_string(net.mode);
    if (net.mode == policy::NetworkMode::allowlist) {
      std::string hosts;
      for (const auto& h : net.hosts) hosts += (hosts.empty() ? "" : ",") + h.text();
      env_["PARALLEX_ALLOWED_HOSTS"] = hosts;
    }
    env_["PARALLEX_SEALED"] = plan_.seal == run::SealLevel::none ? "0" : "1";
    // The broker's variables (placeholders, the trust variables) win over what
    // the environment rules kept, and no secret it brokers stays in any other.
    broker_.add_to(env_);
    // A page the run asks to open reaches the user, never a browser.
    opener_.add_to(env_);
    return ok();
  }

  // The command runs. Its outcome (or why it did not start) is kept for
  // finish(); nothing here returns early past a started process.
  void launch() {
    if (plan_.command_problem) return;  // recorded by finish(): nothing starts
    if (stop_) stop_->take_pending();
    if (stop_ && stop_->received()) {
      launch_error_ = Error::conflict("the run was stopped before its command started");
      return;
    }
    if (auto fault = injected_fault("launch"); !fault) {
      launch_error_ = fault.error();
      return;
    }
    backend::LaunchRequest request;
    request.policy = &plan_.policy;
    request.executable = plan_.executable;
    request.argv = argv_;
    request.env = env_;
    request.cwd = plan_.cwd.empty() ? plan_.policy.run_folder() : plan_.cwd;
    request.state_dir = plan_.dirs.private_dir;
    request.allow_weaker_seal = plan_.seal == run::SealLevel::weaker || plan_.allow_weaker_seal;
    killswitch::RunControl& control = *kill_switch_.control();
    request.cgroup_fd = control.cgroup_fd();
    request.process_limit_held_by = control.process_limit_held_by();
    request.pids_cgroup_fd = control.pids_cgroup_fd();
    request.run_git_looked = files_->looked_at_git();
    request.run_git_fd = files_->git_dir();
    request.view_files = broker_.parts().view_files;
    home_.add_to(request);
    if (proxy_.wanted()) {
      // The run's proxy, on the socket the seal hands over.
      request.on_proxy_socket = [this](backend::NetworkHandOff handoff) -> Result<backend::EnvMap> {
        try {
          return proxy_.on_socket(std::move(handoff), record_.proxy_log, broker_.parts().broker);
        } catch (const std::exception& e) {
          return thrown(e.what());
        }
      };
    }
    // The seal builds its view now, on the other core, and its command waits
    // until this returns: the supervisor's own set-up goes here, off the path
    // to the command's start. An error ends the run before its command starts;
    // so does an exception, which must not cross the backend (it abandons the
    // seal it is building only when told by an error).
    request.on_started = [this](pid_t pid, bool enters_cgroup) -> Status {
      try {
        return seal_started(pid, enters_cgroup);
      } catch (const std::exception& e) {
        return thrown(e.what());
      }
    };
    // The socket stops and the registry entry goes while the seal's
    // namespaces are torn down. Not under a lock of ours: the socket's thread
    // may be serving a pause, whose hooks take the proxy's.
    request.on_command_ended = [this] {
      if (killswitch::RunControl* c = kill_switch_.control()) c->retire();
    };
    take_policy_text();  // its thread ends before the seal is forked
    auto launched = backend_.launch(request);
    if (!launched) {
      launch_error_ = launched.error();
      return;
    }
    launched_ = std::move(launched).value();
  }

  // The supervisor's set-up while the seal builds its view (launch()).
  Status seal_started(pid_t pid, bool enters_cgroup) {
    // The seal is forked: a thread of ours may run now (none did at the fork).
    if (stop_) stop_->start();
    lap("seal spawned");
    PX_TRY(make_record());
    PX_TRY(injected_fault("arm"));
    PX_TRY(kill_switch_.on_started(pid, enters_cgroup));
    kill_if_stopped();
    killswitch::RunControl& control = *kill_switch_.control();
    decoys_.on_started(control, record_);
    files_->on_started(
        control, {record_.supervisor_pid, record_.supervisor_start, pid, run::process_start_ticks(pid)});
    home_.on_started(control);
    proxy_.on_started(control);
    opener_.on_started();
    lap("armed, watched");
    record_.status = RunStatus::running;
    if (auto first = write_record(); !first) {
      // The room reserved above is for the last write; the filesystem filled
      // meanwhile (by something else: the run has not started).
      if (first.error().message.find(std::strerror(ENOSPC)) != std::string::npos ||
          first.error().message.find(std::strerror(EDQUOT)) != std::string::npos) {
        no_room_ = true;
        run::release_record_space(dir_);
        return run::state_folder_full(dir_, kRecordReserve + policy_text_.size() + 16 * 1024);
      }
      return first.error();
    }
    lap("record");
    if (observer_.started) observer_.started(record_);
    files_->hand_to_watchdog();
    lap("sweep state");
    PX_TRY(injected_fault("started"));
    return ok();
  }

  // What the guard records when a step threw (a thread that could not start,
  // an allocation that failed): a failure of parallex, not of the command.
  static Error thrown(const std::string& what) {
    return Error::internal("parallex failed while starting or ending the run (" + what +
                           "); the run was ended. If the machine is not short of memory or processes, "
                           "this is a bug: please report it");
  }

  // The services after the command ended, each writing its part of the
  // record. Not the mirror of their start: the kill switch goes first (what
  // is left of the run is killed: nothing of it runs while the home settles
  // and the protected files are swept), the protected files last (finish()).
  void stop_services() {
    decoys_.stop(record_);
    kill_switch_.stop(record_);
    lap("stop kill switch");
    opener_.stop(record_);
    proxy_.stop(record_);
    broker_.stop(record_);
    // Landlock cannot refuse one name in a writable folder: a `git init` in
    // a run folder that had no repository is said after the run.
    files_->note_new_repository(record_);
    if (home_.active() && make_record()) home_.stop(record_);
    lap("home settings");
  }

  // The record's end: status, exit status, end time; the private dir goes.
  // Called once, by run() or by the guard when a step failed.
  RunResult finish(const std::optional<Error>& step_error = std::nullopt) {
    // Its error is the run's (launch_error_ or step_error) when it failed before.
    const bool made_before = record_made_;
    if (auto made = make_record(); !made && made_before) say({NoticeKind::alert, made.error().message});
    if (files_) files_->stop(record_);
    lap("quarantine");
    run::RunRecord& r = record_;
    if (stop_) stop_->take_pending();  // the run ended before its seal was forked
    const int stop_signal = stop_ ? stop_->received() : 0;
    run::RunOutcome outcome;
    outcome.stop_signal = stop_signal;
    outcome.killed = kill_switch_.was_killed();
    outcome.step_failed = launch_error_.has_value() || step_error.has_value();
    if (plan_.command_problem) outcome.command_problem = plan_.command_problem->status;
    if (launched_) {
      const backend::LaunchResult& l = *launched_;
      for (const auto& n : l.notes) r.notices.push_back(redacted(n));
      // A guarantee found missing only at launch makes the record's seal weaker.
      if (l.weakened && r.seal == run::SealLevel::full) r.seal = run::SealLevel::weaker;
      if (plan_.seal != run::SealLevel::none) {
        run::RunLimits limits{plan_.policy.process_limit().max, {}};
        for (const auto& m : l.process_limit) limits.held_by.push_back({m.id, m.description});
        r.limits = std::move(limits);
      }
      r.seal_refusals = seal_refusals(l.refusals);
      if (l.refusals.total() > 0)
        r.notices.push_back(
            {NoticeKind::alert, redact("the seal refused " + std::to_string(l.refusals.total()) + " request" +
                                       (l.refusals.total() == 1 ? "" : "s") + ": " + l.refusals.summary())});
      if (!l.message.empty()) r.setup_error = redact(l.message);
      r.exit_code = l.exit_code;
      if (l.signal) r.signal = l.signal;
      outcome.launched = true;
      outcome.exit_code = l.exit_code;
      outcome.signal = l.signal;
      outcome.launch_said = !l.message.empty();
      // What failed after the command ended does not change how it ended.
      if (step_error)
        r.notices.push_back({NoticeKind::alert, redact("after the command ended, " + step_error->message)});
    }
    r.status = run::classify(outcome);
    if (r.status == RunStatus::interrupted) r.signal = stop_signal;
    if (!launched_ && plan_.command_problem && r.status == plan_.command_problem->status) {
      r.setup_error = redact(plan_.command_problem->message);
    } else if (!launched_) {
      const std::optional<Error>& e = launch_error_ ? launch_error_ : step_error;
      std::string why = e ? e->message : std::string("the run ended before its command started");
      // Accepted already, the weaker seal is no way out: the message says what is.
      if (e && e->kind == ErrorKind::unsupported && !plan_.allow_weaker_seal)
        why +=
            ". A guarantee of the seal is missing here (see `parallex check`); pass --allow-weaker-seal to "
            "run with a weaker seal anyway";
      r.setup_error = redact(why);
    }
    {
      std::lock_guard lock(say_mu_);
      for (const auto& n : said_) r.notices.push_back(n);
    }
    r.exit_status = run::exit_status(r.status, r.exit_code.value_or(0), r.signal.value_or(0));
    r.ended_at = iso_utc_now();
    if (plan_.on_finish) plan_.on_finish(r);
    if (r.seal_refusals)
      for (const auto& refused : r.seal_refusals->refused)
        events_.emit_at(*r.ended_at, run::event::seal_refused, run::seal_refusal_fields(refused));
    events_.emit_at(*r.ended_at, run::event::run_end, run::run_end_fields(r));
    write_last_record();
    // After the record's last write: shown by -v, not kept in run.json.
    lap("record's last write");
    std::error_code ec;
    if (!plan_.dirs.private_dir.empty()) fs::remove_all(plan_.dirs.private_dir, ec);
    lap("private dir removed");
    finished_ = true;
    return RunResult{r, dir_};
  }

  // The record's last write, into the room reserved at its first; cut to the
  // run's outcome when even that does not fit. A record never written (its
  // first write comes before the command starts, so nothing ran) leaves no
  // folder behind.
  void write_last_record() {
    run::release_record_space(dir_);
    // Refused for want of room before anything ran: a record would only take
    // more of what little is left; the message says why nothing ran.
    if (no_room_ && !launched_) return discard();
    auto written = write_record();
    if (written) return;
    std::error_code ec;
    const bool had_record = fs::exists(dir_ / "run.json", ec);
    if (had_record && run::write_outcome_only(dir_, record_)) {
      say({NoticeKind::alert, "the run's record keeps only how the run ended: " + written.error().message});
      return;
    }
    if (!had_record && !launched_) {
      discard();
      if (record_.setup_error.empty())
        say({NoticeKind::alert, "no record of this run was kept: " + written.error().message});
      return;
    }
    say({NoticeKind::alert, written.error().message});
  }

  // No record could be made: nothing of the run is left behind (its private
  // dir, the folder its record would have gone to, with what went there
  // before the record: the reserved room, the proxy's and broker's logs of a
  // command that never started).
  void discard() {
    std::error_code ec;
    if (!plan_.dirs.private_dir.empty()) fs::remove_all(plan_.dirs.private_dir, ec);
    if (!dir_.empty() && !fs::exists(dir_ / "run.json", ec)) fs::remove_all(dir_, ec);
  }

  bool finished() const { return finished_; }

  // The guard's end, when a step threw: the run's processes are killed and
  // its record finished as a step that failed, with what was thrown; its
  // private dir goes. Before the run had a record folder, nothing of it is
  // left and the error comes back.
  Result<RunResult> end_after_exception(const std::string& what) {
    const Error e = thrown(what);
    if (dir_.empty() || finished_) {
      discard();
      return e;
    }
    try {
      release_resources();
      return finish(e);
    } catch (...) {
      discard();
      return e;
    }
  }

  // PARALLEX_SEAL_TIMING=1: how long each step took, as timing notices.
  void lap(const char* step) {
    static const bool timing = [] {
      const char* t = std::getenv("PARALLEX_SEAL_TIMING");
      return t && std::string(t) == "1";
    }();
    if (!timing) return;
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - lap_).count();
    lap_ = now;
    record_.notices.push_back(
        {NoticeKind::timing, std::string("supervisor: ") + step + " " + std::to_string(ms) + " ms"});
  }
  // A run that failed before its command ran, or whose step threw: its
  // services end without their parts of the record (finish() records why).
  void release_resources() {
    decoys_.stop(record_);
    opener_.release();
    kill_switch_.release();
    proxy_.release();
  }

 private:
  // Published ports need the run's network even when it may reach nothing
  // outside; so does a fully sealed offline run, for its DNS alone:
  // the names it asks for are refused and listed at its end, with the flag
  // that would allow each (its programs only say they could not resolve them).
  bool wants_network() const {
    return plan_.policy.network().mode != policy::NetworkMode::offline ||
           !plan_.policy.network().published.empty() || plan_.seal == run::SealLevel::full;
  }
  static Notice redacted(const Notice& n) { return {n.kind, redact(n.text)}; }
  static std::string sigabbrev(int sig) {
    const char* name = ::sigabbrev_np(sig);
    return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
  }
  void say(const Notice& n) {
    const Notice clean = redacted(n);
    {
      std::lock_guard lock(say_mu_);
      said_.push_back(clean);
    }
    if (observer_.notice) observer_.notice(clean);
  }

  // The signals' thread ends before the kill switch it uses goes.
 public:
  ~Run() { stop_.reset(); }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

 private:
  run::RunPlan plan_;
  backend::Backend& backend_;
  const RunObserver& observer_;
  std::string id_;
  fs::path dir_;
  run::EventLog events_;  // before the services that emit from their threads: it outlives them
  bool record_made_ = false;
  bool no_room_ = false;   // the record's room could not be reserved: nothing ran, no record is kept
  run::RunRecord record_;  // its `policy` stays empty: the file gets policy_text_
  std::string policy_text_;
  std::optional<Background<std::string>> policy_text_made_;  // open_record() starts it; taken before the fork
  std::unique_ptr<StopSignals> stop_;
  // say() as the services take it (any thread).
  const std::function<void(const Notice&)> say_ = [this](const Notice& n) { say(n); };
  // The services, in the order they start; each ends before the kill switch
  // whose control it uses goes (members go in reverse order).
  KillSwitch kill_switch_{plan_};
  NetworkProxy proxy_{plan_.policy, wants_network()};
  CredentialBroker broker_;
  HarnessHome home_{plan_};
  std::unique_ptr<ProtectedFiles> files_;
  RunDecoys decoys_{plan_.decoy_home, say_, [this](DecoyHit hit) {
                      hit.process = redact(hit.process);  // as in the record
                      events_.emit(run::event::decoy_touched, run::decoy_fields(hit));
                    }};
  RunOpener opener_{
      [this](const std::string& host, std::uint16_t port) { return proxy_.allows_now(host, port); },
      plan_.seal != run::SealLevel::none, say_, &events_};
  backend::EnvMap env_;
  std::vector<std::string> argv_;
  std::optional<Error> launch_error_;
  std::optional<backend::LaunchResult> launched_;
  std::mutex say_mu_;
  std::vector<Notice> said_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point lap_ = std::chrono::steady_clock::now();
};

}  // namespace

std::string new_run_id() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  // 16 random bits: the record folder is claimed exclusively (a collision in
  // one runs folder draws again). Ad-hoc and agent runs keep records in
  // different folders and share the registry's names; a wider id would make
  // the control socket's path (108 bytes at most) too long under a long
  // XDG_RUNTIME_DIR, so that collision is left (docs/architecture.md).
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(rd() & 0xffff));
  return std::string(stamp) + "-" + suffix;
}

namespace {

// The run: its record, its services started in order, the command
// launched (each service's on_started once its first process exists), each
// service's part of the record once it ended, the record finished.
Result<RunResult> carry_out(Run& r) {
  if (auto opened = r.open_record(); !opened) {
    r.discard();
    return opened.error();
  }
  r.lap("open record");
  // From here on the record is finished whatever fails: the steps return an
  // error only before the command starts, and finish() records it.
  auto failed = [&r](const Error& e) {
    r.release_resources();
    return r.finish(e);
  };
  r.stop_on_signals();
  if (auto s = r.start_services(); !s) return failed(s.error());
  if (auto s = r.build_environment(); !s) return failed(s.error());
  r.lap("environment");
  r.launch();  // the services' on_started: seal_started(), while the seal builds its view
  r.lap("launch and wait");
  r.stop_services();
  return r.finish();
}

}  // namespace

Result<RunResult> run(run::RunPlan plan, backend::Backend& backend, const RunObserver& observer) {
  if (plan.argv.empty()) return Error::invalid("no command to run: give it after --");
  // Runs nothing swept (their supervisor and watchdog both died, or the
  // machine went down) are swept before this one starts, perhaps in the same folder.
  if (protect::sweep_available() && observer.notice)
    for (const auto& line : protect::sweep_unswept_runs()) observer.notice({NoticeKind::alert, line});
  // And the private dirs of runs whose supervisor and watchdog both died.
  run::sweep_private_dirs();
  Run r(std::move(plan), backend, observer);
  // The guard: a step that throws ends the run as one that failed does,
  // rather than leaving its record unfinished and its private dir on disk.
  try {
    return carry_out(r);
  } catch (const std::exception& e) {
    return r.end_after_exception(e.what());
  } catch (...) {
    return r.end_after_exception("an exception of unknown type");
  }
}

}  // namespace px::supervisor
