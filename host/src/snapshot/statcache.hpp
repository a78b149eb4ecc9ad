#pragma once
// (dev, ino, size, mtime_ns, ctime_ns) -> hash for every file of the last
// snapshot, so an unchanged home costs one stat walk. Losing it only costs a
// re-hash, so it is written atomically but not fsynced.
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/error.hpp"

namespace px::snapshot {

class StatCache {
 public:
  // A missing or unreadable cache, or one for another source, loads empty.
  void load(int store_dir, const std::string& source);
  // The hash recorded for this path if the file looks untouched since.
  const std::string* lookup(const std::string& rel, const struct stat& st) const;
  // lookup(), and on a hit the entry is kept for the next save: one hash-table
  // probe and no copy per unchanged file (the common case of a snapshot).
  const std::string* reuse(const std::string& rel, const struct stat& st);
  void put(const std::string& rel, const struct stat& st, const std::string& hash);
  // Entries whose ctime is not clearly before `walk_start_ns` are dropped: a
  // write in the same timestamp tick as the hash would otherwise go unseen.
  Status save(int store_dir, int tmp_dir, const std::string& source, std::int64_t walk_start_ns) const;
  // Keeps only entries whose hash passes `keep` (after prune removed objects).
  template <class Pred>
  void filter(Pred keep) {
    for (auto it = next_.begin(); it != next_.end();)
      it = keep(it->second.hash) ? std::next(it) : next_.erase(it);
    std::erase_if(kept_, [&](const auto* entry) { return !keep(entry->second.hash); });
    dirty_ = true;
  }
  void adopt_loaded() {
    kept_.clear();
    for (const auto& entry : loaded_) kept_.push_back(&entry);
    dirty_ = true;
  }
  bool empty() const { return loaded_.empty(); }

 private:
  struct Item {
    std::uint64_t dev = 0, ino = 0, size = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    std::string hash;
  };
  using Map = std::unordered_map<std::string, Item>;
  Map loaded_;                                  // as on disk; not changed after load()
  std::vector<const Map::value_type*> kept_;    // loaded entries that still hold
  Map next_;                                    // new or changed entries
  bool dirty_ = false;  // the next save differs from what is on disk
};

}  // namespace px::snapshot
