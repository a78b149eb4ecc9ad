#pragma once
// (dev, ino, size, mtime_ns, ctime_ns) -> hash for every file of the last
// snapshot, so an unchanged home costs one stat walk. Losing it only costs a
// re-hash, so it is written atomically but not fsynced.
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "common/error.hpp"

namespace px::snapshot {

class StatCache {
 public:
  // A missing or unreadable cache, or one for another source, loads empty.
  void load(int store_dir, const std::string& source);
  // The hash recorded for this path if the file looks untouched since.
  const std::string* lookup(const std::string& rel, const struct stat& st) const;
  void put(const std::string& rel, const struct stat& st, const std::string& hash);
  // Entries whose ctime is not clearly before `walk_start_ns` are dropped: a
  // write in the same timestamp tick as the hash would otherwise go unseen.
  Status save(int store_dir, int tmp_dir, const std::string& source, std::int64_t walk_start_ns) const;
  // Keeps only entries whose hash passes `keep` (after prune removed objects).
  template <class Pred>
  void filter(Pred keep) {
    for (auto it = next_.begin(); it != next_.end();)
      it = keep(it->second.hash) ? std::next(it) : next_.erase(it);
    dirty_ = true;
  }
  void adopt_loaded() {
    next_ = loaded_;
    dirty_ = true;
  }
  bool empty() const { return loaded_.empty(); }

 private:
  struct Item {
    std::uint64_t dev = 0, ino = 0, size = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    std::string hash;
  };
  std::unordered_map<std::string, Item> loaded_;
  std::unordered_map<std::string, Item> next_;
  bool dirty_ = false;  // next_ differs from what is on disk
};

}  // namespace px::snapshot
