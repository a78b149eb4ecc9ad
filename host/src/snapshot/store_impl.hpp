#pragma once
// Shared between store.cpp, take.cpp and rewind.cpp; not part of the API.
#include <chrono>
#include <vector>

#include "snapshot/manifest.hpp"
#include "snapshot/objects.hpp"
#include "snapshot/snapshot.hpp"
#include "snapshot/statcache.hpp"

namespace px::snapshot::detail {

struct StoreFds {
  int root = -1;
  UniqueFd objects, snapshots, tmp;
  std::string display;  // the store folder, for messages
};
Result<StoreFds> open_fds(int root, const fs::path& dir);

// flock on <store>/lock. Waits up to `wait` for another process's take, prune or rewind to end.
Result<UniqueFd> lock_store(int root, const fs::path& dir,
                            std::chrono::milliseconds wait = std::chrono::seconds(60));

struct Scan {
  SnapshotInfo info;
  std::vector<Entry> entries;  // sorted with path_less
  std::int64_t walk_start_ns = 0;
  bool wrote_objects = false;
};
// Walks `options.source`; with `store` set, stores new contents and the tree
// (but does not commit a record). Without it, only hashes (for --dry-run).
Result<Scan> scan_tree(StoreFds& fds, const fs::path& store_dir, const TakeOptions& options, bool store,
                       StatCache& cache);
// Makes a scan a listed snapshot: syncfs, record written last (temp, fsync,
// rename, fsync dir), then the stat cache.
Status commit(StoreFds& fds, Scan& scan, const StatCache& cache);

// The readable records, oldest first; the names of those that cannot be read
// (damaged, of another id) go to `unreadable` when given.
Result<std::vector<SnapshotInfo>> list_infos(int snapshots_dir, const std::string& display,
                                             std::vector<std::string>* unreadable = nullptr);
Result<SnapshotInfo> find_info(int snapshots_dir, const std::string& display, const std::string& id);
Result<std::vector<Entry>> load_tree(const StoreFds& fds, const SnapshotInfo& info);

// Refuses a source inside the store or a store inside the source.
Status check_separate(const fs::path& source, const fs::path& store);

}  // namespace px::snapshot::detail
