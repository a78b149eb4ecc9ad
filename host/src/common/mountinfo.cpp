#include "common/mountinfo.hpp"

#include <fstream>
#include <sstream>

namespace px {

namespace {

// The kernel writes a space, tab, newline and backslash in a path as \040,
// \011, \012 and \134.
std::string unescaped(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && field.size() - i >= 4) {
      const std::string digits = field.substr(i + 1, 3);
      if (digits.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(digits, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

}  // namespace

bool MountInfo::has_super_option(const std::string& option) const {
  std::istringstream in(super_options);
  std::string word;
  while (std::getline(in, word, ','))
    if (word == option) return true;
  return false;
}

std::vector<MountInfo> read_mountinfo(const std::filesystem::path& file) {
  std::vector<MountInfo> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superopts
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream head(line.substr(0, dash));
    std::istringstream tail(line.substr(dash + 3));
    std::string id, parent, dev, root, mountpoint;
    MountInfo m;
    if (!(head >> id >> parent >> dev >> root >> mountpoint) || !(tail >> m.fstype >> m.source)) continue;
    tail >> m.super_options;
    m.root = unescaped(root);
    m.mountpoint = unescaped(mountpoint);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace px
