#include "supervisor/protected_files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "common/redact.hpp"
#include "common/unique_fd.hpp"
#include "killswitch/run_control.hpp"
#include "protect/project_watch.hpp"
#include "protect/quarantine.hpp"
#include "protect/sweep_after_death.hpp"
#include "protect/unswept.hpp"

namespace px::supervisor {

using run::Notice;
using run::NoticeKind;

ProtectedFiles::ProtectedFiles(const run::RunPlan& plan, fs::path record_dir, Say say, OnMoved on_moved)
    : plan_(plan), record_dir_(std::move(record_dir)), say_(std::move(say)), on_moved_(std::move(on_moved)) {}

ProtectedFiles::~ProtectedFiles() = default;

// What is at the run folder's protected paths (files other programs run
// later, .git's) before anything runs: what the run makes there is moved
// aside (protect/quarantine.hpp). Landlock cannot refuse one name in a
// writable folder, so a `git init` in a run folder that had no repository is
// caught after the run instead (note_new_repository).
void ProtectedFiles::start() {
  if (plan_.seal != run::SealLevel::none && !plan_.command_problem)
    quarantine_ = std::make_unique<protect::Quarantine>(plan_.policy, record_dir_);
  std::error_code ec;
  had_git_ = fs::symlink_status(run_git(), ec).type() != fs::file_type::not_found;
  // A sealed run's quarantine opened .git once; the folder it found counts
  // whatever the name shows a moment later.
  if (quarantine_) had_git_ = had_git_ || quarantine_->had_git_dir();
}

bool ProtectedFiles::looked_at_git() const {
  return quarantine_ != nullptr;
}
int ProtectedFiles::git_dir() const {
  return quarantine_ ? quarantine_->git_dir() : -1;
}

// Moves aside at once what appears there while the run goes on.
void ProtectedFiles::on_started(killswitch::RunControl& control, const RunProcesses& processes) {
  {
    std::lock_guard lock(mu_);
    control_ = &control;
    processes_ = processes;
  }
  if (!quarantine_) return;
  auto watch =
      protect::ProjectWatch::start(*quarantine_, [this](const std::vector<protect::Quarantined>& moved) {
        for (const auto& q : moved) {
          say_({NoticeKind::alert, protect::describe(q, plan_.policy.run_folder())});
          if (on_moved_) on_moved_(q);
        }
        hand_to_watchdog();
      });
  if (watch) {
    watch_ = std::move(watch).value();
    // An inotify instance's last close waits for the kernel (an SRCU grace
    // period): the watchdog holds it too, so that close comes after the user
    // has the run's exit status.
    (void)control.hold_until_exit(watch_->descriptor());
  } else {
    say_({NoticeKind::alert, "files other programs run later are not watched during this run (" +
                                 watch.error().message +
                                 "); what the run made there is moved aside at its end"});
  }
}

// What the watchdog sweeps with if this supervisor dies before the run's
// end (protect/sweep_after_death.hpp): the quarantine's state in a sealed
// memfd (it holds small git files kept to put back: never on disk), handed
// once the command's first process exists and again after each sweep, so
// that what was moved and put back since is what the watchdog compares with.
void ProtectedFiles::hand_to_watchdog() {
  if (!quarantine_ || !protect::sweep_available()) return;
  remember_for_a_later_sweep();
  const std::vector<std::uint8_t> state = quarantine_->state();
  UniqueFd memfd(::memfd_create("parallex-quarantine", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  std::size_t written = 0;
  while (memfd && written < state.size()) {
    const ssize_t n = ::write(memfd.get(), state.data() + written, state.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
  if (!memfd ||
      ::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    return;
  std::lock_guard lock(mu_);
  if (control_ && !control_->hand_sweep(memfd.get(), quarantine_->run_dir()))
    say_({NoticeKind::alert,
          "the run's watchdog could not be given the protected files' state: if parallex is "
          "killed, what the run made there stays in the folder"});
}

// What a later parallex sweeps with if this supervisor and its watchdog
// both die (protect/unswept.hpp): on disk, without the git files kept to
// put back.
void ProtectedFiles::remember_for_a_later_sweep() {
  std::lock_guard one_at_a_time(unswept_mu_);  // the watch's thread and the launch's
  protect::UnsweptRun u;
  u.record_dir = record_dir_;
  u.quarantine = quarantine_->state(/*kept_files=*/false);
  u.folder = quarantine_->run_folder();
  struct stat st {};
  if (::fstat(quarantine_->run_dir(), &st) == 0) {
    u.folder_dev = st.st_dev;
    u.folder_ino = st.st_ino;
  }
  {
    std::lock_guard lock(mu_);
    u.supervisor_pid = processes_.supervisor_pid;
    u.supervisor_start = processes_.supervisor_start;
    u.first_pid = processes_.first_pid;
    u.first_start = processes_.first_start;
    if (control_) {
      u.watchdog_pid = control_->watchdog_pid();
      u.cgroup = control_->cgroup_path();
    }
  }
  if (u.watchdog_pid > 0 && watchdog_start_ == 0) watchdog_start_ = run::process_start_ticks(u.watchdog_pid);
  u.watchdog_start = watchdog_start_;
  if (auto kept = protect::remember_unswept(u); !kept)
    say_({NoticeKind::alert,
          "what a later parallex would sweep with, were this one and its watchdog killed, "
          "could not be kept: " +
              kept.error().message});
}

// Frozen, nothing of the run is halfway through a write: what it made at the
// protected paths is moved aside now, before the user works in the folder
// while the run waits. Said at once.
void ProtectedFiles::sweep_paused() {
  sweep("when the run was paused", /*live=*/true, nullptr);
}

// Moves aside what the run made at the protected paths: said now while the
// run goes on (`live`), else into the record's notices.
void ProtectedFiles::sweep(const std::string& when, bool live, run::RunRecord* record) {
  if (!quarantine_) return;
  const auto moved = quarantine_->sweep(when, /*git=*/true, /*may_copy=*/true);
  for (const auto& q : moved) {
    if (on_moved_) on_moved_(q);
    const Notice n{NoticeKind::alert, protect::describe(q, plan_.policy.run_folder())};
    if (live || !record)
      say_(n);
    else
      record->notices.push_back({n.kind, redact(n.text)});
  }
  if (!moved.empty()) hand_to_watchdog();
}

void ProtectedFiles::note_new_repository(run::RunRecord& record) const {
  std::error_code ec;
  if (had_git_ || fs::symlink_status(run_git(), ec).type() == fs::file_type::not_found) return;
  record.git_repository_created = run_git();
  record.notices.push_back(
      {NoticeKind::alert,
       "the run made a git repository in " + plan_.policy.run_folder().string() +
           " (.git was not there before): its hooks and config were written by the run and "
           "git would run them for you; review or remove " +
           run_git().string()});
}

// After the run however it ended: the last sweep, into the record; a later
// parallex has nothing left to sweep for this run.
void ProtectedFiles::stop(run::RunRecord& record) {
  if (watch_) watch_->stop();
  if (!quarantine_) return;
  sweep("when the run ended", /*live=*/false, &record);
  if (protect::sweep_available()) protect::forget_unswept(record_dir_);
  record.quarantined = quarantine_->moved();
}

fs::path ProtectedFiles::run_git() const {
  return plan_.policy.run_folder() / ".git";
}

}  // namespace px::supervisor
