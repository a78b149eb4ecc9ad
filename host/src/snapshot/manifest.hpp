#pragma once
// One snapshot's tree: every entry under the source with its type, mode,
// owner, size, mtime, content hash and link target. Stored as a compact text
// object (one line per entry, names %-escaped so any byte survives) because a
// home of 20,000 files must load and save in milliseconds.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "snapshot/snapshot.hpp"

namespace px::snapshot {

enum EntryFlags : std::uint32_t {
  kUnreadable = 1,  // could not be read; restore leaves whatever is there
  kChanged = 2,     // changed while being read; stored as last seen
};

struct Entry {
  std::string path;        // relative, '/'-separated, raw bytes
  char type = 'f';         // f d l p s c b
  std::uint32_t mode = 0;  // permission bits incl. setuid/setgid/sticky as found
  std::uint32_t uid = 0, gid = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string hash;    // files only
  std::string target;  // symlinks only
  std::uint32_t flags = 0;
};

// Order in which parents come before their children and siblings stay together.
bool path_less(std::string_view a, std::string_view b);

std::string escape_bytes(std::string_view raw);
// For messages: control bytes and invalid UTF-8 become \xNN, the rest stays as is.
std::string display_name(std::string_view raw);
Result<std::string> unescape_bytes(std::string_view escaped);

std::string serialize_tree(const std::vector<Entry>& entries);
Result<std::vector<Entry>> parse_tree(std::string_view text);

std::string serialize_info(const SnapshotInfo& info);
Result<SnapshotInfo> parse_info(std::string_view text);

}  // namespace px::snapshot
