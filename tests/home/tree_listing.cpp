#include "tree_listing.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string_view>

#include "common/sha256.hpp"

namespace px::test {

namespace {

char type_of(mode_t m) {
  if (S_ISREG(m)) return 'f';
  if (S_ISDIR(m)) return 'd';
  if (S_ISLNK(m)) return 'l';
  if (S_ISFIFO(m)) return 'p';
  if (S_ISSOCK(m)) return 's';
  if (S_ISCHR(m)) return 'c';
  if (S_ISBLK(m)) return 'b';
  return '?';
}

std::string file_hash(int dirfd, const char* name) {
  const int fd = ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "unreadable";
  std::string data;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) data.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return "sha256:" + sha256_hex(data);
}

// Walks through directory fds, by name, never through a link.
void walk(int dirfd, const std::string& prefix, TreeListing& out) {
  const int listing = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing < 0) return;
  DIR* dir = ::fdopendir(listing);
  if (!dir) {
    ::close(listing);
    return;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  for (const auto& name : names) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    TreeEntry e;
    e.type = type_of(st.st_mode);
    e.mode = st.st_mode & 07777;
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    if (e.type == 'f') {
      e.content = file_hash(dirfd, name.c_str());
    } else if (e.type == 'l') {
      char target[4096];
      const ssize_t n = ::readlinkat(dirfd, name.c_str(), target, sizeof target);
      e.content = n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
      e.mode = 0;  // a link's own mode means nothing
    }
    out[path] = e;
    if (e.type == 'd') {
      const int sub = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0) {
        walk(sub, path, out);
        ::close(sub);
      }
    }
  }
  ::closedir(dir);
}

}  // namespace

std::string TreeEntry::describe() const {
  char head[64];
  std::snprintf(head, sizeof head, "%c %04o %u:%u", type, mode, static_cast<unsigned>(uid),
                static_cast<unsigned>(gid));
  return content.empty() ? head : std::string(head) + " " + content.substr(0, 24);
}

TreeListing list_tree(const std::filesystem::path& root) {
  TreeListing out;
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) == 0)
    out["."] = TreeEntry{'d', static_cast<unsigned>(st.st_mode & 07777), st.st_uid, st.st_gid, ""};
  walk(fd, "", out);
  ::close(fd);
  return out;
}

std::vector<TreeDifference> compare_trees(const TreeListing& before, const TreeListing& after) {
  std::vector<TreeDifference> out;
  for (const auto& [path, entry] : before) {
    const auto it = after.find(path);
    if (it == after.end())
      out.push_back({path, &entry, nullptr});
    else if (!(it->second == entry))
      out.push_back({path, &entry, &it->second});
  }
  for (const auto& [path, entry] : after)
    if (!before.count(path)) out.push_back({path, nullptr, &entry});
  return out;
}

std::string TreeDifference::describe() const {
  const std::string name = printable_name(path);
  if (!before) return "added " + name + ": " + after->describe();
  if (!after) return "removed " + name + ": " + before->describe();
  return "changed " + name + ": " + before->describe() + " -> " + after->describe();
}

std::string printable_name(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\%03o", c);
      out += esc;
    }
  }
  return out;
}

bool is_printable_name(const std::string& bytes) {
  for (unsigned char c : bytes)
    if (c < 0x20 || c >= 0x7f) return false;
  return true;
}

}  // namespace px::test
