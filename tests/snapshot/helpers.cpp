#include "helpers.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace px::snapshot::test {

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "pxsnap-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
  fs::create_directory(src());
}

TempDir::~TempDir() {
  std::error_code ec;
  // Undo 000/0555 modes a test left so the cleanup can remove everything.
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
  }
  ::system(("umount -l " + (path_ / "mnt").string() + " 2>/dev/null").c_str());
  fs::remove_all(path_, ec);
}

void write_file(const fs::path& p, const std::string& content, mode_t mode) {
  fs::create_directories(p.parent_path());
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + p.string());
  }
  ::chmod(p.c_str(), mode);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, Node> capture(const fs::path& root, const std::vector<std::string>& skip) {
  std::map<std::string, Node> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::string rel = fs::relative(it->path(), root).string();
    bool skipped = false;
    for (const auto& s : skip) skipped |= rel == s || rel.rfind(s + "/", 0) == 0;
    if (skipped) {
      if (it->is_directory() && !it->is_symlink()) it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    Node n;
    n.mode = st.st_mode & 07777;
    if (S_ISREG(st.st_mode)) {
      n.type = 'f';
      n.content = st.st_size > (1 << 22) ? "size:" + std::to_string(st.st_size) : read_file(it->path());
    } else if (S_ISDIR(st.st_mode)) {
      n.type = 'd';
    } else if (S_ISLNK(st.st_mode)) {
      n.type = 'l';
      n.content = fs::read_symlink(it->path()).string();
    } else if (S_ISFIFO(st.st_mode)) {
      n.type = 'p';
    } else {
      n.type = 's';
    }
    out[rel] = n;
  }
  return out;
}

std::string describe_diff(const std::map<std::string, Node>& a, const std::map<std::string, Node>& b) {
  std::string out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end())
      out += "only in first: " + k + "\n";
    else if (!(it->second == v))
      out += "differs: " + k + " (" + v.type + " " + std::to_string(v.mode) + " vs " + it->second.type + " " +
             std::to_string(it->second.mode) + ")\n";
  }
  for (const auto& [k, v] : b)
    if (a.find(k) == a.end()) out += "only in second: " + k + "\n";
  return out;
}

int in_child(const std::function<void()>& fn) {
  pid_t pid = ::fork();
  if (pid == 0) {
    fn();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

void make_sample_tree(const fs::path& root) {
  write_file(root / ".gitconfig", "[user]\n\tname = agent\n");
  write_file(root / ".config/gh/hosts.yml", "github.com:\n  user: agent\n", 0600);
  write_file(root / ".claude/history.jsonl", std::string(100000, 'h'));
  write_file(root / ".claude/dup-a", "same content");
  write_file(root / ".claude/dup-b", "same content");
  write_file(root / "bin/tool", "#!/bin/sh\necho hi\n", 0755);
  write_file(root / "empty-file", "");
  fs::create_directories(root / "empty/dir/deep");
  fs::create_symlink(".gitconfig", root / "link-to-config");
  fs::create_symlink("/nonexistent/target", root / "dangling");
  write_file(root / std::string("bad-\xff\xfe-name"), "not utf-8");
  write_file(root / "new\nline", "newline name");
  write_file(root / std::string(255, 'n'), "long name");
  ::chmod((root / "bin").c_str(), 0750);
}

}  // namespace px::snapshot::test
