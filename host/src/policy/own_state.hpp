#pragma once
// Parallex's own state — its data dir (every agent's rules, keys, tokens,
// snapshots and run records; the plugins it loads), its runtime dir (control
// sockets, other runs' private dirs), its config dir (profiles) and state dir —
// is denied to every run, whatever the grants, like a secret path. Only what
// the run itself needs stays reachable: an agent's home, its keys and gh dirs
// (read-only), the run's own temp dir.
//
// A deny beats every allow, so the kept paths cannot lie under a deny: each
// root is denied entry by entry, except the entries on the way to a kept path.
#include <filesystem>
#include <vector>

#include "common/error.hpp"

namespace px::policy {

namespace fs = std::filesystem;

class PolicyBuilder;
class Policy;

struct OwnState {
  std::vector<fs::path> roots;  // Parallex's own dirs (absolute); missing ones are skipped
  std::vector<fs::path> keep;   // paths inside them the run needs (absolute)
};

// The roots on this machine: data dir, runtime dir, config dir, state dir.
std::vector<fs::path> own_state_roots();

// Adds the denies (origin: built-in).
void deny_own_state(PolicyBuilder& builder, const OwnState& state);

// Makes the roots that are missing where a writable grant of `policy`
// reaches them (mode 0700), once the policy is composed. A deny holds a path
// in a writable grant only where it exists: a run with `--grant ~/.local:rw`
// on a machine without ~/.local/share/parallex yet could otherwise make it,
// and a `plugins/` in it, which the next `parallex` loads outside any seal.
// Where no grant reaches, nothing is made.
Status make_own_state_roots(const OwnState& state, const Policy& policy);

// An error when `run_folder` lies inside Parallex's own state (and not inside
// a kept path): a run folder there would be hidden from its own run.
Status check_run_folder_outside_own_state(const fs::path& run_folder, const OwnState& state);

}  // namespace px::policy
