#include "killswitch/run_control.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <sstream>

#include "common/paths.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/direct_control.hpp"
#include "killswitch/global_pause.hpp"
#include "killswitch/proc.hpp"
#include "killswitch/process_tracker.hpp"
#include "killswitch/watchdog.hpp"

namespace px::killswitch {
namespace {

bool valid_run_id(const std::string& id) {
  if (id.empty() || id.size() > 100 || id[0] == '.' || id[0] == '-') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* to_string(Mechanism m) {
  return m == Mechanism::cgroup ? "cgroup" : "process-tree";
}

const char* to_string(RunState s) {
  switch (s) {
    case RunState::starting:
      return "starting";
    case RunState::running:
      return "running";
    case RunState::paused:
      return "paused";
    case RunState::killed:
      return "killed";
    case RunState::ended:
      return "ended";
  }
  return "unknown";
}

TrackingProbe probe_tracking() {
  TrackingProbe t;
  const auto probe = probe_cgroup();
  if (probe.usable) {
    t.mechanism = Mechanism::cgroup;
    t.description = "cgroup v2 (" + probe.how + ")";
    t.cannot_catch =
        "nothing the run starts itself escapes its cgroup; a program the run gets started by something "
        "outside it "
        "(a host daemon it can reach) is not the run's, which the seal prevents by leaving no such daemon "
        "reachable";
  } else {
    t.mechanism = Mechanism::process_tree;
    t.description = "process-tree fallback: " + probe.why_not;
    t.cannot_catch = ProcessTracker::limitations();
  }
  return t;
}

RunControl::RunControl(RunControlOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<RunControl>> RunControl::start(RunControlOptions options) {
  PX_TRY_ASSIGN(auto rc, prepare(std::move(options)));
  PX_TRY(rc->arm());
  return rc;
}

Result<std::unique_ptr<RunControl>> RunControl::prepare(RunControlOptions options) {
  if (!valid_run_id(options.run_id))
    return Error::invalid("'" + options.run_id + "' is not a valid run id (letters, digits, '-', '_', '.').");
  if (options.runtime_dir.empty()) options.runtime_dir = parallex_runtime_dir();
  std::unique_ptr<RunControl> rc(new RunControl(std::move(options)));
  const auto& o = rc->options_;
  PX_TRY_ASSIGN(rc->runs_dir_, runs_dir(o.runtime_dir));

  std::string why_no_cgroup = "the run asked for the process-tree fallback";
  // A test's machine without a writable pids controller (backend.hpp).
  CgroupLimits limits = o.limits;
  if (backend::process_limit_hidden_for_tests("pids-cgroup")) limits.pids_max.reset();
  if (o.use_cgroup) {
    const auto probe = probe_cgroup();
    if (probe.usable) {
      auto cg = RunCgroup::create(probe, o.run_id, limits);
      if (cg) {
        rc->cgroup_ = std::make_unique<RunCgroup>(std::move(cg).value());
        rc->mechanism_ = Mechanism::cgroup;
        rc->mechanism_note_ = "cgroup v2 (" + probe.how +
                              "): every process of the run, detached or not, stays in " +
                              rc->cgroup_->path().string() +
                              "; pause freezes it at once (cgroup.freeze) and kill ends it (cgroup.kill)";
      } else {
        why_no_cgroup = cg.error().message;
      }
    } else {
      why_no_cgroup = probe.why_not;
    }
  }
  if (rc->cgroup_)
    for (const auto& applied : rc->cgroup_->applied_limits())
      if (applied.rfind("pids.max=", 0) == 0)
        rc->limit_held_by_.push_back(
            {kPidsCgroupV2, "pids.max of the run's cgroup v2 (" + rc->cgroup_->path().string() + ")"});
  std::string pids_note;
  if (rc->limit_held_by_.empty() && o.pids_v1 && limits.pids_max) {
    // cgroup v2 holds no pids controller here (a hybrid layout): the v1 one.
    const PidsProbe pids = probe_pids(CgroupProbe{});
    if (pids.v1) {
      if (auto cg = PidsCgroupV1::create(pids, o.run_id, *limits.pids_max)) {
        rc->pids_v1_.emplace(std::move(cg).value());
        rc->limit_held_by_.push_back(
            {kPidsCgroupV1, "pids.max of the run's cgroup in the v1 pids hierarchy (" +
                                rc->pids_v1_->path().string() + ")"});
      } else {
        pids_note = "; the run's v1 pids cgroup could not be made: " + cg.error().message;
      }
    }
  }
  if (!rc->cgroup_) {
    PX_TRY_ASSIGN(rc->tracker_, ProcessTracker::start());
    rc->mechanism_ = Mechanism::process_tree;
    rc->mechanism_note_ = why_no_cgroup + ". " + ProcessTracker::limitations();
  }
  rc->mechanism_note_ += pids_note;

  rc->entry_.id = o.run_id;
  rc->entry_.agent = o.agent;
  rc->entry_.command = o.command;
  rc->entry_.folder = o.folder;
  rc->entry_.pid = ::getpid();
  if (const auto st = read_proc_stat(::getpid())) rc->entry_.pid_start = st->start_time;
  rc->entry_.since = utc_now_iso();
  rc->entry_.state = to_string(RunState::starting);
  rc->entry_.mechanism = to_string(rc->mechanism_);
  rc->entry_.socket = rc->runs_dir_ / (o.run_id + ".sock");
  if (rc->cgroup_) rc->entry_.cgroup = rc->cgroup_->path();

  // The watchdog comes with the cgroup: a supervisor killed from here on
  // leaves no cgroup behind (the watchdog removes it, and the socket and
  // entry arm() makes, if they exist by then).
  if (o.watchdog) {
    WatchdogSpec spec;
    if (rc->cgroup_) {
      spec.cgroup_fd = rc->cgroup_->cgroup_fd();
      spec.cgroup_path = rc->cgroup_->path();
    }
    spec.unlink = {rc->entry_.socket, rc->runs_dir_ / (o.run_id + ".json"),
                   direct_op_file(rc->runs_dir_, o.run_id)};
    if (rc->pids_v1_) spec.rmdir.push_back(rc->pids_v1_->path());
    PX_TRY_ASSIGN(rc->watchdog_, spawn_watchdog(spec));
    if (rc->tracker_) rc->tracker_->exclude(rc->watchdog_.pid);
    rc->entry_.watchdog_pid = rc->watchdog_.pid;
  }
  return rc;
}

Status RunControl::arm() {
  // The socket exists before the registry entry, so an entry whose socket
  // refuses is always stale.
  PX_TRY_ASSIGN(server_, ControlServer::start(
                             entry_.socket, [this](const nlohmann::json& r, pid_t) { return handle(r); },
                             [this](pid_t pid) { return peer_inside_run(pid); }, [this] { take_direct(); }));
  std::lock_guard lock(mu_);
  return write_entry(runs_dir_, entry_);
}

RunControl::~RunControl() {
  finish();
}

bool RunControl::hold_until_exit(int fd) const {
  return hand_to_watchdog(watchdog_, fd);
}

fs::path RunControl::cgroup_path() const {
  return cgroup_ ? cgroup_->path() : fs::path();
}

bool RunControl::hand_sweep(int state_fd, int run_dir_fd) const {
  return hand_sweep_to_watchdog(watchdog_, state_fd, run_dir_fd);
}

bool RunControl::hand_private_dirs(int dir_fd) const {
  return hand_private_dirs_to_watchdog(watchdog_, dir_fd);
}

int RunControl::cgroup_fd() const {
  return cgroup_ ? cgroup_->cgroup_fd() : -1;
}

std::vector<std::pair<std::string, std::string>> RunControl::child_environment() const {
  return {{"PARALLEX_RUN", "1"}, {"PARALLEX_RUN_ID", options_.run_id}};
}

void RunControl::notice(const std::string& m) const {
  if (options_.hooks.notice) options_.hooks.notice(m);
}

void RunControl::set_state_locked(RunState s) {
  state_ = s;
  entry_.state = to_string(s);
  if (!retired_) (void)write_entry(runs_dir_, entry_);
}

Status RunControl::attach(pid_t sealed_child, bool enters_itself) {
  std::lock_guard lock(mu_);
  if (finished_) return Error::conflict("run " + options_.run_id + " has finished already.");
  entry_.child_pid = sealed_child;
  if (const auto st = read_proc_stat(sealed_child)) entry_.child_start = st->start_time;
  if (cgroup_) {
    // A child that enters by itself does so before it runs anything, or fails
    // the run; moving it here too would be a second migration, and each costs
    // the kernel an RCU grace period (about 10 ms of the run's start-up). A
    // pause set meanwhile still holds it: a task that enters a frozen cgroup freezes.
    if (!enters_itself) {
      const auto in = cgroup_->pids();
      if (std::find(in.begin(), in.end(), sealed_child) == in.end()) {
        PX_TRY(cgroup_->add(sealed_child));
        notice(
            "the run's first process was put in its cgroup after it had started; a process it forked before "
            "that is not tracked");
      }
    }
  } else {
    tracker_->attach(sealed_child);
    // Without a cgroup the watchdog knows the run is over when its first
    // process has ended and nothing runs in the pid namespace it made: only
    // then does it sweep.
    UniqueFd first(sys_pidfd_open(sealed_child, 0));
    if (first) (void)hand_first_process_to_watchdog(watchdog_, first.get());
  }
  set_state_locked(RunState::running);
  std::string by;
  if (pause_pending_) by = "a pause requested while the run was starting";
  if (global_pause_since(options_.runtime_dir)) by = "parallex pause --all";
  if (!by.empty()) PX_TRY(pause_locked(by));
  return ok();
}

Status RunControl::pause(const std::string& by) {
  std::lock_guard lock(mu_);
  return pause_locked(by);
}

Status RunControl::pause_locked(const std::string& by) {
  if (finished_ || state_ == RunState::killed || state_ == RunState::ended)
    return Error::conflict("run " + options_.run_id + " has ended; there is nothing to pause.");
  if (state_ == RunState::paused) return ok();
  const auto t0 = std::chrono::steady_clock::now();
  // The network first: cheaper than the freeze, and a tunnel in flight stops
  // carrying data even before the last process is frozen.
  if (options_.hooks.cut_network) options_.hooks.cut_network();
  if (state_ == RunState::starting) {
    // Nothing to freeze yet; attach() pauses the run as soon as it exists.
    pause_pending_ = true;
    add_event({{"op", "pause"}, {"by", by}, {"at", utc_now_iso()}, {"pending", true}});
    return ok();
  }
  if (cgroup_) {
    PX_TRY(cgroup_->freeze());
  } else {
    PX_TRY(tracker_->stop_all());
  }
  const double ms = ms_since(t0);
  add_event({{"op", "pause"}, {"by", by}, {"at", utc_now_iso()}, {"ms", ms}});
  set_state_locked(RunState::paused);
  notice("run " + options_.run_id + " paused by " + by +
         ": its processes are frozen and its network is cut until `parallex resume`");
  if (options_.hooks.frozen) options_.hooks.frozen();
  return ok();
}

Status RunControl::resume(const std::string& by) {
  std::lock_guard lock(mu_);
  return resume_locked(by);
}

Status RunControl::resume_locked(const std::string& by) {
  if (finished_ || state_ == RunState::killed || state_ == RunState::ended)
    return Error::conflict("run " + options_.run_id + " has ended; there is nothing to resume.");
  if (state_ == RunState::starting) {
    pause_pending_ = false;
    if (options_.hooks.restore_network) options_.hooks.restore_network();
    return ok();
  }
  if (state_ != RunState::paused) return ok();
  if (options_.hooks.restore_network) options_.hooks.restore_network();
  if (cgroup_) {
    PX_TRY(cgroup_->thaw());
  } else {
    PX_TRY(tracker_->continue_all());
  }
  add_event({{"op", "resume"}, {"by", by}, {"at", utc_now_iso()}});
  set_state_locked(RunState::running);
  notice("run " + options_.run_id + " resumed by " + by);
  return ok();
}

Status RunControl::kill(const std::string& by) {
  std::lock_guard lock(mu_);
  if (finished_) return Error::conflict("run " + options_.run_id + " has ended already.");
  if (options_.hooks.cut_network) options_.hooks.cut_network();
  if (cgroup_) {
    PX_TRY(cgroup_->kill());
  } else if (tracker_->root() != 0) {
    PX_TRY(tracker_->kill_all());
  }
  add_event({{"op", "kill"}, {"by", by}, {"at", utc_now_iso()}});
  killed_ = true;
  set_state_locked(RunState::killed);
  notice("run " + options_.run_id + " killed by " + by);
  return ok();
}

// Into the record, and to the run's event stream as it happens (under mu_:
// the hook only appends a line).
void RunControl::add_event(nlohmann::json event) {
  if (options_.hooks.event) options_.hooks.event(event);
  events_.push_back(std::move(event));
}

RunState RunControl::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool RunControl::was_killed() const {
  std::lock_guard lock(mu_);
  return killed_;
}

std::vector<pid_t> RunControl::processes() const {
  if (cgroup_) return cgroup_->pids();
  std::vector<pid_t> out;
  if (tracker_->root() == 0) return out;
  for (const auto& p : tracker_->scan()) out.push_back(p.pid);
  return out;
}

bool RunControl::owns_process(pid_t pid) const {
  if (cgroup_) {
    std::istringstream in(read_proc_file("/proc/" + std::to_string(pid) + "/cgroup").value_or(""));
    const std::string leaf = "/" + cgroup_->path().filename().string();
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("0::", 0) != 0) continue;
      const std::string path = line.substr(3);
      return path.size() >= leaf.size() && path.compare(path.size() - leaf.size(), leaf.size(), leaf) == 0;
    }
    return false;
  }
  for (const pid_t p : processes())
    if (p == pid) return true;
  return false;
}

nlohmann::json RunControl::status() const {
  nlohmann::json j;
  {
    std::lock_guard lock(mu_);
    j = to_json(entry_);
    j["state"] = to_string(state_);
  }
  j.erase("v");
  j["processes"] = processes().size();
  j["mechanism_note"] = mechanism_note_;
  if (cgroup_) j["cgroup"] = cgroup_->path().string();
  return j;
}

nlohmann::json RunControl::record() const {
  std::lock_guard lock(mu_);
  nlohmann::json j{{"mechanism", to_string(mechanism_)}, {"note", mechanism_note_}, {"events", events_}};
  if (cgroup_) j["limits"] = cgroup_->applied_limits();
  return j;
}

std::optional<std::string> RunControl::peer_inside_run(pid_t pid) const {
  // The cgroup and pid-namespace checks already cover a sealed run; this
  // catches a process of an unsealed fallback run, by its ancestry.
  if (!tracker_ || tracker_->root() == 0) return std::nullopt;
  const auto tree = processes();
  for (pid_t p = pid; p > 1;) {
    if (std::find(tree.begin(), tree.end(), p) != tree.end())
      return "the request comes from a process of run " + options_.run_id;
    const auto st = read_proc_stat(p);
    if (!st) break;
    p = st->ppid;
  }
  return std::nullopt;
}

nlohmann::json RunControl::handle(const nlohmann::json& request) {
  const std::string op = request.value("op", "");
  std::string by = "parallex " + op;
  if (request.contains("by") && request["by"].is_string())
    by = request["by"].get<std::string>().substr(0, 200);
  Status result = ok();
  if (op == "pause") {
    result = pause(by);
  } else if (op == "resume") {
    result = resume(by);
  } else if (op == "kill") {
    result = kill(by);
  } else if (op != "status") {
    if (options_.hooks.network)
      if (auto answered = options_.hooks.network(request, by)) return *answered;
    return {{"ok", false},
            {"error",
             "unknown op '" + op + "' (status, pause, resume, kill, questions, answer, allow, deny, rules)"}};
  }
  nlohmann::json reply{{"ok", static_cast<bool>(result)}, {"run", status()}};
  if (!result) reply["error"] = result.error().message;
  return reply;
}

void RunControl::take_direct() {
  std::lock_guard direct(direct_mu_);
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
  }
  const auto done = take_direct_op(runs_dir_, options_.run_id);
  if (!done) return;
  const std::string by = (done->by.empty() ? "parallex " + done->op : done->by) +
                         " (done without this supervisor, which " + done->why + ")";
  Status applied = ok();
  if (done->op == "pause")
    applied = pause(by);
  else if (done->op == "resume")
    applied = resume(by);
  else
    applied = kill(by);
  if (!applied) notice("what " + by + " did could not be taken in: " + applied.error().message);
}

void RunControl::retire() {
  take_direct();
  {
    std::lock_guard lock(mu_);
    if (retired_ || finished_) return;
    retired_ = true;
  }
  // Outside the lock: the server thread may be waiting for it.
  if (server_) server_->stop();
  remove_entry(runs_dir_, options_.run_id);
}

void RunControl::finish() {
  take_direct();
  bool retired = false;
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    finished_ = true;
    retired = retired_;
  }
  // Outside the lock: the server thread may be waiting for it.
  if (server_ && !retired) server_->stop();
  std::lock_guard lock(mu_);
  std::size_t leftovers = 0;
  if (cgroup_) {
    leftovers = cgroup_->pids().size();
    if (leftovers) (void)cgroup_->kill();
    (void)cgroup_->remove();
  } else if (tracker_ && tracker_->root() != 0) {
    // The root itself is the caller's to wait for; it counts if still alive.
    leftovers = tracker_->scan().size();
    if (leftovers) (void)tracker_->kill_all();
  }
  if (leftovers) {
    add_event({{"op", "end"}, {"at", utc_now_iso()}, {"leftovers_killed", leftovers}});
    notice(std::to_string(leftovers) + " process(es) of run " + options_.run_id +
           " were still running after the run's command ended and were killed");
  }
  if (pids_v1_) pids_v1_->remove();
  state_ = RunState::ended;
  if (!retired) remove_entry(runs_dir_, options_.run_id);
  stop_watchdog(watchdog_.pid);
  watchdog_.pid = 0;
}

}  // namespace px::killswitch
