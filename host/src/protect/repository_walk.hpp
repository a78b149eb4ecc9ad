#pragma once
// The walk for repositories inside a run folder other than its own (a clone
// in vendor/x, a `git init a/b/c/x` a run made): folders holding a `.git`
// folder, or a `.git` gitfile or link (git follows either to a git dir),
// breadth first, never through a link, never into `.git`. `node_modules` is
// walked like any folder: a `.git` there is a repository git runs in as well
// (a gitlink names it, an editor opens a file of it). Every run pays for it twice (its start and its end),
// and reading a folder is what costs (ext4 hashes each entry of a folder it lists), so a folder whose change
// time says nothing in it changed is taken from the walk cache (walk_cache.hpp) instead of being read again.
//
// Bounded: at most `max_reads` folders read and `max_visits` visited a
// walk (a run can make 100,000 folders), `max_depth` levels deep.
// What a bound left out is returned, for the quarantine to say so.
#include <cstddef>
#include <filesystem>
#include <vector>

#include "protect/walk_cache.hpp"

namespace px::protect {

namespace fs = std::filesystem;

struct WalkBounds {
  int max_depth = 0;               // levels below the run folder whose folders are looked into
  std::size_t max_reads = 0;       // folders read (not taken from the cache) at most
  bool into_repositories = false;  // a repository's own folders are looked into too
  // Folders visited at most, read or taken from the cache (each costs a
  // stat at least).
  std::size_t max_visits = WalkCache::kMaxFolders;
};

struct WalkFound {
  std::vector<fs::path> repositories;  // folders holding a .git folder, sorted; never the run folder
  // Folders holding a .git that is not a folder (a gitfile naming a git dir
  // elsewhere, a link), sorted; the run folder's own ("") too.
  std::vector<fs::path> gitfiles;
  // Folders not looked into, nor anything beneath them, because a bound on
  // reads or visits was reached, in the order met (shallowest first).
  std::vector<fs::path> unvisited;
  // Folders `max_depth` levels down that hold folders not looked into.
  std::vector<fs::path> too_deep;
  std::size_t read = 0;    // folders read
  std::size_t cached = 0;  // folders taken from the cache
  std::size_t leaves = 0;  // folders their link count showed to hold no folder, not read
};

// Walks the run folder `run_dir` (a descriptor) within `bounds`, with and
// into `cache` (a WalkCache() reads every folder).
WalkFound find_repositories(int run_dir, const WalkBounds& bounds, WalkCache& cache);

}  // namespace px::protect
