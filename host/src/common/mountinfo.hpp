#pragma once
// The mount table as /proc/PID/mountinfo shows it (proc(5)), read once by
// every part that looks for a filesystem (the cgroup hierarchies, check).
#include <filesystem>
#include <string>
#include <vector>

namespace px {

struct MountInfo {
  std::filesystem::path root;        // the mounted tree's root within its filesystem
  std::filesystem::path mountpoint;  // where it is mounted, as this process sees it
  std::string fstype;                // "cgroup2", "cgroup", "proc", ...
  std::string source;
  std::string super_options;  // comma-separated ("rw,pids" for a v1 pids hierarchy)
  // True when `option` is one of super_options' words.
  bool has_super_option(const std::string& option) const;
};

// Every line of `file`, in order; paths with the kernel's octal escapes
// (\040 for a space) unescaped. A line that is not a mount entry is skipped;
// a file that cannot be read gives none.
std::vector<MountInfo> read_mountinfo(const std::filesystem::path& file = "/proc/self/mountinfo");

}  // namespace px
