#pragma once
// Real trees on disk for the snapshot tests, and a fork helper for the
// kill -9 cases.
#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace px::snapshot::test {

namespace fs = std::filesystem;

// A fresh folder under /tmp with "src" and "store" inside; removed afterwards.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const fs::path& path() const { return path_; }
  fs::path src() const { return path_ / "src"; }
  fs::path store() const { return path_ / "store"; }

 private:
  fs::path path_;
};

void write_file(const fs::path& p, const std::string& content, mode_t mode = 0644);
std::string read_file(const fs::path& p);

struct Node {
  char type = 0;
  mode_t mode = 0;
  std::string content;  // files: content (or "size:N" when large); links: target
  bool operator==(const Node&) const = default;
};
// Every entry under `root` by relative path, without following links.
std::map<std::string, Node> capture(const fs::path& root, const std::vector<std::string>& skip = {});
std::string describe_diff(const std::map<std::string, Node>& a, const std::map<std::string, Node>& b);

// Runs `fn` in a forked child and returns the wait status.
int in_child(const std::function<void()>& fn);

// A small tree with the awkward cases: 0600 files, empty folders, links,
// non-UTF-8 names, newlines in names, a 255-byte name.
void make_sample_tree(const fs::path& root);

}  // namespace px::snapshot::test
