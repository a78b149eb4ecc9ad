#pragma once
// The run's protected files, as one service of the supervisor: the files a
// later program reads (an editor's tasks, a harness's hooks, direnv's .envrc,
// everything in .git that makes git run a program) kept from what the run
// plants there. The work is protect/'s (the quarantine, the project watch,
// the sweeps after a death); this is its place in the run, in the run's
// order:
//   start()        before the seal: what is there now is remembered (and
//                  whether the run folder has a .git at all);
//   on_started()   once the command's first process exists: moved aside at
//                  once while the run goes on, and the state a sweep after
//                  this supervisor's death needs handed to the watchdog;
//   sweep_paused() when the kill switch froze the run;
//   note_new_repository(), stop()   after the run, however it ended: what
//                  the run made there is moved aside, into the record.
// Unsealed runs do what the user chose: nothing is remembered or moved.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "run/notice.hpp"
#include "run/plan.hpp"
#include "run/record.hpp"

namespace px::killswitch {
class RunControl;
}
namespace px::protect {
class Quarantine;
class ProjectWatch;
}  // namespace px::protect

namespace px::supervisor {

namespace fs = std::filesystem;

// Who the run's processes are, for a later parallex that sweeps when this
// supervisor and its watchdog both died (protect/unswept.hpp).
struct RunProcesses {
  pid_t supervisor_pid = 0;
  std::uint64_t supervisor_start = 0;
  pid_t first_pid = 0;  // the command's first process
  std::uint64_t first_start = 0;
};

class ProtectedFiles {
 public:
  using Say = std::function<void(const run::Notice&)>;
  using OnMoved = std::function<void(const run::Quarantined&)>;
  // `say`: a notice while the run goes on (any thread, one at a time).
  // `on_moved`: each file moved aside, when it is (the run's events).
  ProtectedFiles(const run::RunPlan& plan, fs::path record_dir, Say say, OnMoved on_moved = {});
  ~ProtectedFiles();
  ProtectedFiles(const ProtectedFiles&) = delete;
  ProtectedFiles& operator=(const ProtectedFiles&) = delete;

  void start();
  // The run folder's .git as start() opened it, for the seal to bind (-1: none
  // was looked at, an unsealed run).
  bool looked_at_git() const;
  int git_dir() const;
  // `control` outlives this service's use of it (the run owns both; stop()
  // comes before the kill switch goes).
  void on_started(killswitch::RunControl& control, const RunProcesses& processes);
  // Hands the quarantine's current state to the watchdog (after each sweep
  // and once the seal started).
  void hand_to_watchdog();
  void sweep_paused();
  void note_new_repository(run::RunRecord& record) const;
  void stop(run::RunRecord& record);

 private:
  void sweep(const std::string& when, bool live, run::RunRecord* record);
  void remember_for_a_later_sweep();
  fs::path run_git() const;

  const run::RunPlan& plan_;
  fs::path record_dir_;
  Say say_;
  OnMoved on_moved_;
  std::unique_ptr<protect::Quarantine> quarantine_;
  std::unique_ptr<protect::ProjectWatch>
      watch_;  // after quarantine_: its thread ends before what it reads goes
  bool had_git_ = false;
  std::mutex mu_;  // control_ and processes_: set once started, read by the watch's and the pause's threads
  killswitch::RunControl* control_ = nullptr;
  RunProcesses processes_;
  std::mutex unswept_mu_;  // remember_for_a_later_sweep(), and watchdog_start_
  std::uint64_t watchdog_start_ = 0;
};

}  // namespace px::supervisor
