#pragma once
// The end-of-run sweep of the protected files (protect/quarantine.hpp)
// for a run whose supervisor died (SIGKILL, a crash) before it could sweep.
//
// The supervisor hands its run's watchdog the quarantine's state (what was at
// the protected paths when the run started, as a memfd) and the run folder's
// descriptor, and hands them again after each sweep it makes. When the
// supervisor is gone and every process of the run is dead, the watchdog execs
// the supervisor's own executable with kSweepArgument: a fresh process (the
// watchdog is a forked child of a multi-threaded one, where the sweep's
// allocations and locks are not safe) that restores the Quarantine from that
// state, sweeps the same way the end of a run does, and adds what it moved
// to the run's record, where `parallex runs` and `parallex report` (which
// close the record as lost) show it.
//
// Safety: the process runs as the supervisor's user, with the supervisor's
// descriptor of the run folder (the same folder whatever was renamed since),
// and resolves every path from it without following a link, as the
// supervisor's sweep does. No process of the run is left to race it.
#include <cstdint>
#include <optional>
#include <vector>

namespace px::protect {

inline constexpr const char* kSweepArgument = "--parallex-watchdog-sweep";

// For main(), first: the exit status when argv is the watchdog's call (fd 3
// the state, fd 4 the run folder, fd 5 the runs-private folder, whose dirs no
// live run holds it removes: run/private_dir.hpp), nothing otherwise. Calling it at all says
// this executable can sweep for its runs (sweep_available()).
std::optional<int> sweep_entry(int argc, char** argv);
// Whether the running executable answers kSweepArgument (its main() called
// sweep_entry()): only then do runs hand the watchdog their state. A test
// executable that runs runs in-process does not, so its watchdogs never exec it.
bool sweep_available();

// The whole of a run's sweep-state file (the quarantine's state, CBOR) from
// `fd`; nullopt when it cannot be read or is larger than any state a run
// writes (64 MiB): the file is in the run's record, so it is read bounded.
std::optional<std::vector<std::uint8_t>> read_sweep_state(int fd);

}  // namespace px::protect
