#pragma once
// A listing of a folder tree for the home guard: every entry's name, type,
// mode, owner and content (a SHA-256 for files, the target for links),
// never following a link; and the differences between two listings.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace px::test {

struct TreeEntry {
  char type = '?';    // f file, d dir, l link, p fifo, s socket, c/b device
  unsigned mode = 0;  // permission bits, setuid/setgid/sticky included
  uid_t uid = 0;
  gid_t gid = 0;
  std::string content;  // files: sha256 of the bytes; links: the target
  bool operator==(const TreeEntry& o) const {
    return type == o.type && mode == o.mode && uid == o.uid && gid == o.gid && content == o.content;
  }
  std::string describe() const;  // "f 0644 0:0 sha256:ab12..."
};

// Relative path (as bytes) -> entry. The root itself is "." .
using TreeListing = std::map<std::string, TreeEntry>;

TreeListing list_tree(const std::filesystem::path& root);

struct TreeDifference {
  std::string path;                   // relative, as bytes
  const TreeEntry* before = nullptr;  // null: added
  const TreeEntry* after = nullptr;   // null: removed
  std::string describe() const;       // "added .claude.json: d 0700 ..." (names escaped as ls -b does)
};

// Differences between two listings (pointers into them: keep both alive).
std::vector<TreeDifference> compare_trees(const TreeListing& before, const TreeListing& after);

// A name as `ls -b` shows it: printable ASCII as is, anything else as \ooo.
std::string printable_name(const std::string& bytes);
// Whether every byte of the name is printable (no garbage from a dangling buffer).
bool is_printable_name(const std::string& bytes);

}  // namespace px::test
