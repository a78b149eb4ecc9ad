#pragma once
// Watches, while a run goes on, the folders where a file other programs run
// later could appear (Quarantine::watch_dirs), and has it moved aside at
// once: the window in which the user's own programs (an editor open on the
// folder, a harness started there) could pick it up is the watch's latency,
// not the rest of the run. inotify: no privilege needed. The end of the run
// sweeps again, whatever the watch saw, so a missed event loses nothing.
#include <functional>
#include <memory>

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "common/watch_thread.hpp"
#include "protect/quarantine.hpp"

namespace px::protect {

class ProjectWatch {
 public:
  // Calls `moved` (from the watch's thread) with what each sweep moved aside.
  static Result<std::unique_ptr<ProjectWatch>> start(
      Quarantine& quarantine, std::function<void(const std::vector<Quarantined>&)> moved);
  ~ProjectWatch();
  ProjectWatch(const ProjectWatch&) = delete;
  ProjectWatch& operator=(const ProjectWatch&) = delete;
  void stop();
  // The inotify instance (RunControl::hold_until_exit: its last close waits for the kernel).
  int descriptor() const { return inotify_.get(); }

 private:
  ProjectWatch(Quarantine& q, std::function<void(const std::vector<Quarantined>&)> moved)
      : quarantine_(q), moved_(std::move(moved)) {}
  void arm();
  // What inotify reported: the quarantine told of a .git, then swept.
  void on_events();
  // Reads what inotify queued; whether a .git appeared in the run folder (or
  // events were lost).
  bool read_events();
  int run_folder_wd_ = -1;

  Quarantine& quarantine_;
  std::function<void(const std::vector<Quarantined>&)> moved_;
  UniqueFd inotify_;
  WatchThread watch_;  // last: stopped before what its callback uses goes
};

}  // namespace px::protect
