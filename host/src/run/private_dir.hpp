#pragma once
// A run's private dir: <runtime dir>/runs-private/run-XXXXXX (0700), holding
// its `tmp` (the run's /tmp and /var/tmp). Never in the run's view; the end
// of the run removes it.
//
// A supervisor killed with SIGKILL cannot: the dir is then removed by the
// run's watchdog once the run's processes are dead (it execs the sweep of
// protect/sweep_after_death.hpp with the runs-private folder's
// descriptor), or by the next `parallex run` or `parallex runs`. Whose it is
// needs no pid: the run holds an flock on the dir (its descriptor lives in
// the supervisor, and in any process of the run that did not exec), and the
// kernel drops it when the last of them is gone. A dir nobody holds is
// nobody's. It is made under another name and renamed to run-XXXXXX once
// locked, so a sweep never sees one that is not locked yet.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::run {

namespace fs = std::filesystem;

struct PrivateDir {
  fs::path path;                   // runs-private/run-XXXXXX
  std::shared_ptr<UniqueFd> lock;  // the flock, held while the run lives
};

// <runtime dir>/runs-private.
fs::path private_dirs_base();
// A new private dir with an empty `tmp` (both 0700), locked.
Result<PrivateDir> make_private_dir();
// Removes every run-* dir of `base_fd` (the runs-private folder) that no
// live run holds, through descriptors (common/remove_tree.hpp). Returns the
// names removed.
std::vector<std::string> sweep_private_dirs(int base_fd);
// The same for private_dirs_base(); cheap when nothing is left: one
// directory read and an open and flock per dir.
std::vector<std::string> sweep_private_dirs();

}  // namespace px::run
