#pragma once
// The snapshot store: content-addressed, deduplicated snapshots of one tree
// (an agent's home) and a rewind that never loses data. This is the API the
// `agent snapshot`, `agent snapshots` and `agent rewind` commands call; the
// `parallex snapshot` command is a thin wrapper over it.
//
// Store layout (see docs/snapshots.md):
//   <store>/objects/ab/cdef...   file contents and trees, named by their hash
//   <store>/snapshots/<id>.json  one small record per snapshot, written last
//   <store>/statcache            (dev, ino, size, mtime, ctime) -> hash
//   <store>/tmp/                 files being written; removed on the next open
//   <store>/lock                 flock: one writer at a time
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::snapshot {

namespace fs = std::filesystem;

struct Progress {
  const char* phase = "";  // "scanning", "storing", "verifying", "restoring"
  std::uint64_t files_done = 0;
  std::uint64_t files_total = 0;
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
};
// Called often (per file); the receiver throttles. Never called after the
// operation returns.
using ProgressFn = std::function<void(const Progress&)>;

struct SnapshotInfo {
  std::string id;               // e.g. 20250101T120000Z-3f9a1c, sortable by time
  std::int64_t time_ns = 0;     // wall clock when the snapshot started
  std::string label;            // free text, e.g. the run id
  std::string kind;             // "manual", "run" or "pre-rewind"
  std::string source;           // the tree, as given (raw bytes)
  std::string tree;             // hash of the manifest object
  std::uint64_t files = 0;      // regular files
  std::uint64_t entries = 0;    // every entry (dirs, links, fifos...)
  std::uint64_t bytes = 0;      // logical size of the regular files
  std::uint64_t new_bytes = 0;  // disk space (allocated blocks) this snapshot added to the store
  bool incomplete = false;      // some entries could not be read (see warnings)
  std::vector<std::string> warnings;
  std::vector<std::string> excludes;
};

struct TakeOptions {
  fs::path source;
  // Relative paths (file or folder) never read nor stored, e.g. "secrets".
  std::vector<std::string> excludes;
  std::string label;
  std::string kind = "manual";
  ProgressFn progress;
};

struct Change {
  enum class Kind { create, update, metadata, remove, move_aside, keep };
  Kind kind = Kind::create;
  std::string path;  // relative, raw bytes
  char from = 0;     // entry type before: 'f','d','l','p','s','c','b' or 0
  char to = 0;       // entry type after, or 0
  std::string note;  // why an entry is kept, where it was moved
};
const char* to_string(Change::Kind kind);

struct RewindOptions {
  fs::path source;
  std::optional<std::string> to;  // id or unique prefix; default: newest non-"pre-rewind"
  bool dry_run = false;
  // Added to the target snapshot's own excludes; excluded paths are never touched.
  std::vector<std::string> excludes;
  // Asked before anything changes and again right before the tree is written;
  // returning true refuses the rewind (e.g. the agent is running).
  std::function<bool()> is_busy;
  ProgressFn progress;
};

struct RewindResult {
  std::string target_id;
  std::string undo_id;  // snapshot of the tree as it was before; empty on dry run or no change
  std::vector<Change> changes;
  std::uint64_t files_written = 0;
  std::uint64_t entries_removed = 0;
  std::vector<std::string> warnings;
};

struct PruneResult {
  std::vector<std::string> removed_ids;
  std::uint64_t objects_removed = 0;
  std::uint64_t bytes_freed = 0;
};

class Store {
 public:
  // Opens (creating with `create`) the store folder and removes leftovers of a
  // crashed writer from tmp/. The store must not lie inside a tree it snapshots.
  static Result<Store> open(const fs::path& dir, bool create = true);

  Result<SnapshotInfo> take(const TakeOptions& options);
  // Oldest first.
  Result<std::vector<SnapshotInfo>> list() const;
  // Resolves an id or unique prefix.
  Result<SnapshotInfo> find(const std::string& id_or_prefix) const;
  Result<RewindResult> rewind(const RewindOptions& options);
  // Keeps the newest `keep` snapshots and removes objects no snapshot uses.
  Result<PruneResult> prune(std::size_t keep);
  // Store size on disk (allocated blocks of objects, manifests and cache).
  Result<std::uint64_t> disk_usage() const;

  const fs::path& dir() const { return dir_; }

 private:
  Store() = default;
  fs::path dir_;
  UniqueFd dirfd_;
};

// Refuses a store inside the source (a run could rewrite its own history) or a
// source inside the store. Take and rewind check this too; callers check first
// to avoid creating a store folder in the wrong place.
Status check_store_location(const fs::path& source, const fs::path& store);

// True when `name` (a relative path) is excluded by `excludes` (itself or a parent).
bool is_excluded(std::string_view rel, const std::vector<std::string>& excludes);
// Checks and normalises excludes: relative, no "..", no empty parts.
Result<std::vector<std::string>> normalize_excludes(const std::vector<std::string>& excludes);

}  // namespace px::snapshot
