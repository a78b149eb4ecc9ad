#pragma once
// Runs that nothing swept: what a later `parallex` needs to move aside what a
// run made at the protected paths (protect/quarantine.hpp) when neither its
// supervisor nor its watchdog could: both killed (`kill -9` of both, `pkill -9
// -f parallex`), or the machine went down during the run.
//
// While a run goes on, its supervisor keeps on disk, in the run's record
// folder (0700, parallex's own state, which every run is denied):
// `sweep-state`, the quarantine's state without the git files it keeps to put
// back (they may hold credentials; a changed one is then moved aside, not put
// back), with what tells whether the run is over; and a marker under
// parallex_state_dir()/unswept naming that folder. The supervisor's own sweep
// at the end, or its watchdog's after its death, removes both. Any later
// `parallex run` or `parallex runs` sweeps the runs still marked, once it knows
// that nothing of them runs any more (runs of another machine sharing the
// state folder, a home on NFS, are left to it):
// - the machine was restarted since (another boot id), or
// - the supervisor and the watchdog are gone (pid and start time), and the
//   run's cgroup is empty (what is left in it is killed first) or, without
//   one, its first process is gone too: that process and the init of the
//   run's pid namespace under it die with their parent (PR_SET_PDEATHSIG),
//   and the kernel ends every process of a namespace whose init ended.
// The sweep resolves from the run folder opened again by its path, and only if
// it is the same folder (device and inode) the run had.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::protect {

namespace fs = std::filesystem;

struct UnsweptRun {
  fs::path record_dir;                   // its name is the run's id
  std::vector<std::uint8_t> quarantine;  // Quarantine::state(/*kept_files=*/false)
  fs::path folder;                       // the run folder, opened again by this path
  dev_t folder_dev = 0;
  ino_t folder_ino = 0;
  pid_t supervisor_pid = 0;
  std::uint64_t supervisor_start = 0;
  pid_t watchdog_pid = 0;
  std::uint64_t watchdog_start = 0;
  pid_t first_pid = 0;  // the run's first process, 0 before it exists
  std::uint64_t first_start = 0;
  fs::path cgroup;  // empty without one
};

// parallex_state_dir()/unswept.
fs::path unswept_dir();
// Writes `run`'s sweep-state (replacing the one before) and its marker.
Status remember_unswept(const UnsweptRun& run);
// The run was swept: removes its sweep-state and marker.
void forget_unswept(const fs::path& record_dir);
// Sweeps every marked run that nothing of runs any more, and says for each
// what it moved aside (one line each, for the terminal); runs still going are
// left alone. Cheap when nothing is marked: one directory read.
std::vector<std::string> sweep_unswept_runs();

}  // namespace px::protect
