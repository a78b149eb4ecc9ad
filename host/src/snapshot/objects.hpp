#pragma once
// Content-addressed objects. An object's name is the SHA-256 of a sparse-aware
// encoding of its content (64 KiB blocks; runs of all-zero blocks are counted,
// not hashed), so a 1 TiB sparse file hashes in the time of its data and the
// name does not depend on how a filesystem lays out holes.
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::snapshot {

struct HashOutcome {
  std::string hash;
  bool short_read = false;  // the file shrank while being read
};

// Hashes the first `size` bytes of `fd`, skipping holes (SEEK_DATA/SEEK_HOLE).
// `on_bytes` (may be null) is told of each chunk read.
Result<HashOutcome> hash_fd(int fd, std::uint64_t size, const std::function<void(std::uint64_t)>* on_bytes);
std::string hash_bytes(std::string_view data);

// Copies `size` bytes from `src` to `dst` (both at offset 0): FICLONE where the
// filesystem shares extents, else copy_file_range over data segments only (holes
// stay holes), else read/write. Returns errno or 0.
int copy_content(int src, int dst, std::uint64_t size);

class Objects {
 public:
  Objects(int objects_dir, int tmp_dir) : objects_(objects_dir), tmp_(tmp_dir) {}

  static bool valid_hash(std::string_view hash);
  std::string rel_path(std::string_view hash) const;  // "ab/cdef..."
  bool exists(std::string_view hash) const;

  struct Stored {
    std::string hash;
    std::uint64_t new_bytes = 0;  // 0 when the object was there already
    bool changed = false;         // the source changed while read; object is a consistent copy
    std::string read_error;       // set (and nothing stored) when the source could not be read
  };
  // Stores an open regular file. `display` names the source in errors.
  Result<Stored> put_file(int src, const struct stat& st, const std::string& display,
                          const std::function<void(std::uint64_t)>* on_bytes);
  Result<Stored> put_bytes(std::string_view data, const std::string& display);
  Result<std::string> read_verified(std::string_view hash, const std::string& display) const;
  // Opens an object for reading; errors say which object and why.
  Result<UniqueFd> open(std::string_view hash, const std::string& display) const;
  // Re-hashes an object and checks it matches its name.
  Status verify(std::string_view hash, std::uint64_t size, const std::string& display) const;

 private:
  Status ensure_fanout(std::string_view hash);
  Result<std::string> commit_tmp(const std::string& tmp, std::string_view hash, const std::string& display);
  int objects_;
  int tmp_;
  bool fanout_ready_[256] = {};
};

}  // namespace px::snapshot
