#pragma once
// The kill switch of one run, for supervisor::run(): tracking (a cgroup v2, or
// the process-tree fallback), the control socket, the registry entry, the
// watchdog, and pause / resume / kill with the network cut through the hooks.
//
// Call order in run.cpp (a `pause --all` before attach() finds the pause
// file, one after arm() finds the run registered: either way attach() or the
// socket pauses the run, which starts paused, listed and killable):
//   PX_TRY_ASSIGN(auto control, RunControl::start({.run_id=..., .agent=..., .command=..., .hooks={
//       .cut_network = [&]{ proxy->cut(); }, .restore_network = [&]{ proxy->restore(); },
//       .notice = [&](const std::string& m){ outcome.notices.push_back(m); }}}));
//   PX_TRY(control->arm());      // socket and registry entry
//   // launch: env += control->child_environment(); place the child in
//   // control->cgroup_fd() (clone3 CLONE_INTO_CGROUP, or enter_cgroup() in the
//   // child before it unshares its user namespace) when it is >= 0;
//   // PDEATHSIG(SIGKILL) on the child, from the thread that waits for it.
//   PX_TRY(control->attach(child_pid));
//   ... waitpid(child_pid) ...   (the specific pid: the fallback adopts orphans)
//   control->finish();           // kills leftovers, removes socket, entry and cgroup
//   record["kill_switch"] = control->record();
// The hooks are called from the control socket's thread.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "killswitch/cgroup.hpp"
#include "killswitch/pids_limit.hpp"
#include "killswitch/registry.hpp"
#include "killswitch/watchdog.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

class ControlServer;
class ProcessTracker;

enum class Mechanism { cgroup, process_tree };
enum class RunState { starting, running, paused, killed, ended };
const char* to_string(Mechanism m);
const char* to_string(RunState s);

// For `parallex check`: the mechanism runs would get here and what it cannot catch.
struct TrackingProbe {
  Mechanism mechanism = Mechanism::process_tree;
  std::string description;   // "cgroup v2 (root: run cgroups under /sys/fs/cgroup/parallex)"
  std::string cannot_catch;  // a sentence; the fallback's limitations, or the cgroup's
};
TrackingProbe probe_tracking();

struct RunHooks {
  std::function<void()> cut_network;               // ProxyServer::cut()
  std::function<void()> restore_network;           // ProxyServer::restore()
  std::function<void(const std::string&)> notice;  // a line for the user ("paused by parallex pause --all")
  std::function<void()> frozen;                    // every process of the run is frozen (a pause took hold)
  // The run's network rule and ask mode's questions (supervisor/run_questions.hpp):
  // a request whose op the kill switch does not know, with who sent it; nullopt
  // when it is not one of those either.
  std::function<std::optional<nlohmann::json>(const nlohmann::json& request, const std::string& by)> network;
  // A pause, resume, kill or leftovers' kill as record() keeps it ({op, by,
  // at, ...}), when it happens; called with the control's lock held, so it
  // must not call back into the control.
  std::function<void(const nlohmann::json&)> event;
};

struct RunControlOptions {
  std::string run_id;
  std::string agent;
  std::vector<std::string> command;
  fs::path folder;  // the run folder, in the registry entry
  RunHooks hooks;
  bool use_cgroup = true;  // false (or PARALLEX_NO_CGROUP=1): the process-tree fallback
  CgroupLimits limits;
  // A sealed run whose cgroup v2 gets no pids.max gets a cgroup of its own in
  // the v1 pids hierarchy, where there is one (killswitch/pids_limit.hpp).
  bool pids_v1 = false;
  fs::path runtime_dir;  // empty: parallex_runtime_dir()
  bool watchdog = true;
};

class RunControl {
 public:
  // prepare(), then arm(): for a caller with nothing to do in between.
  static Result<std::unique_ptr<RunControl>> start(RunControlOptions options);
  // Creates the cgroup (or the tracker), what the seal is born into, and
  // forks the watchdog, which removes them if the supervisor dies.
  static Result<std::unique_ptr<RunControl>> prepare(RunControlOptions options);
  // Binds runtime/runs/<id>.sock and writes runtime/runs/<id>.json: from here
  // the run can be listed, paused and killed. The supervisor arms while the
  // seal builds its view, before the command starts. Once.
  Status arm();
  ~RunControl();
  RunControl(const RunControl&) = delete;
  RunControl& operator=(const RunControl&) = delete;

  const std::string& run_id() const { return options_.run_id; }
  Mechanism mechanism() const { return mechanism_; }
  // What the mechanism in force cannot catch, for `parallex check` and the record.
  std::string mechanism_note() const { return mechanism_note_; }
  // The run's cgroup fd (clone3 CLONE_INTO_CGROUP / enter_cgroup()), -1 in the fallback.
  int cgroup_fd() const;
  // The run's cgroup in the v1 pids hierarchy (LaunchRequest::pids_cgroup_fd), or -1.
  int pids_cgroup_fd() const { return pids_v1_ ? pids_v1_->fd() : -1; }
  // What of the kill switch holds the process limit (pids.max of the run's
  // cgroup, v2 or v1); empty when nothing does.
  const std::vector<backend::ProcessLimitMechanism>& process_limit_held_by() const { return limit_held_by_; }
  // Hands `fd` to the run's watchdog, which holds it until after the
  // supervisor ends: an inotify or fanotify instance, whose last close waits
  // for the kernel (killswitch/watchdog.hpp). False without a watchdog.
  bool hold_until_exit(int fd) const;
  // Hands the watchdog what it sweeps with after a supervisor's death
  // (protect/sweep_after_death.hpp). False without a watchdog.
  bool hand_sweep(int state_fd, int run_dir_fd) const;
  // Hands the watchdog the runs-private folder (run/private_dir.hpp), whose
  // unheld dirs it removes after the supervisor's death. False without a watchdog.
  bool hand_private_dirs(int dir_fd) const;
  // For a later parallex to tell whether the run is over (protect/unswept.hpp):
  // the watchdog's pid (0 without one) and the cgroup's path (empty without one).
  pid_t watchdog_pid() const { return watchdog_.pid; }
  fs::path cgroup_path() const;
  // For the sealed child's environment: PARALLEX_RUN=1, PARALLEX_RUN_ID=<id>.
  std::vector<std::pair<std::string, std::string>> child_environment() const;

  // The sealed child was launched (and, with a cgroup, placed in it). Moves it
  // into the cgroup if it is not there yet, starts tracking it, and pauses it
  // at once when a pause came in meanwhile or a global pause is on.
  // `enters_itself`: the child writes itself into the cgroup before it starts
  // anything (seal::LaunchSpec::cgroup_fd), so adding it here first is only a
  // race with that write, not a gap, and no notice is due.
  Status attach(pid_t sealed_child, bool enters_itself = false);

  // Cut the network, then freeze every process of the run. `by` is recorded.
  Status pause(const std::string& by);
  // Restore the network, then thaw.
  Status resume(const std::string& by);
  // Cut the network and kill every process of the run.
  Status kill(const std::string& by);

  RunState state() const;
  // Whether the run was killed by a request (`parallex kill`, a stop signal,
  // or a kill done without this supervisor): its record says `killed`. The
  // state is `ended` once finish() ran, whatever ended it.
  bool was_killed() const;
  // The run's processes now (cgroup.procs, or the tracked tree).
  std::vector<pid_t> processes() const;
  // Whether `pid` is one of the run's processes. With a cgroup this asks the
  // process's own /proc/PID/cgroup, which still names the run's cgroup while
  // the process exits (cgroup.procs no longer lists it by then).
  bool owns_process(pid_t pid) const;
  nlohmann::json status() const;
  // For run.json: mechanism, note, pauses and kills with their times.
  nlohmann::json record() const;

  // Takes in what a client did to the run while this supervisor did not
  // answer (stopped, hung: killswitch/direct_control.hpp) and makes it its
  // own: a pause done on the cgroup cuts the network too and holds the run
  // paused, a kill is recorded as the run's end. The socket's thread calls
  // it when idle and before each request; retire() and finish() once more.
  void take_direct();

  // The command has ended and the seal is being torn down: stops the socket
  // and removes the registry entry (nothing of the run is left to pause or
  // list), while the supervisor would otherwise only wait. finish() does it
  // when this was not called. Idempotent.
  void retire();

  // The sealed child has been waited for: kill what is left of the run
  // (detached processes die with the run), stop the socket, remove the
  // registry entry and the cgroup, stop the watchdog. Idempotent.
  void finish();

 private:
  explicit RunControl(RunControlOptions options);
  nlohmann::json handle(const nlohmann::json& request);
  std::optional<std::string> peer_inside_run(pid_t pid) const;
  Status pause_locked(const std::string& by);
  Status resume_locked(const std::string& by);
  void set_state_locked(RunState s);
  void notice(const std::string& m) const;
  void add_event(nlohmann::json event);

  RunControlOptions options_;
  Mechanism mechanism_ = Mechanism::process_tree;
  std::string mechanism_note_;
  std::unique_ptr<RunCgroup> cgroup_;
  std::optional<PidsCgroupV1> pids_v1_;
  std::vector<backend::ProcessLimitMechanism> limit_held_by_;
  std::unique_ptr<ProcessTracker> tracker_;
  std::unique_ptr<ControlServer> server_;
  fs::path runs_dir_;
  RunEntry entry_;
  Watchdog watchdog_;
  mutable std::mutex mu_;
  // Held through take_direct(): the command's end (retire) and the record's
  // (finish) may both take in a direct action; the second waits until the
  // first has applied it, so finish() never marks the run ended in between.
  std::mutex direct_mu_;
  RunState state_ = RunState::starting;
  bool pause_pending_ = false;
  bool killed_ = false;
  bool finished_ = false;
  bool retired_ = false;  // retire(): the socket stopped, the entry removed
  nlohmann::json events_ = nlohmann::json::array();
};

}  // namespace px::killswitch
