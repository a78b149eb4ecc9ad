#pragma once
// What the seal refused during a run, as the kernel told the supervisor
// (seccomp's listener, Landlock's audit records on Linux). Platform-neutral
// data: every backend fills it as far as its platform tells, and says in
// not_collected what it could not see and why.
#include <cstdint>
#include <string>
#include <vector>

namespace px::backend {

struct Refusal {
  std::string source;   // "seccomp" or "landlock"
  std::string call;     // "ptrace", "ioctl TIOCSTI", "unshare CLONE_NEWUSER", "fs.write_file /etc"
  std::string process;  // the refused process's comm, as the kernel had it
  std::uint64_t count = 0;
};

struct Refusals {
  // Enough to see what a run kept trying, small enough that a process looping
  // on a refused call cannot grow the supervisor.
  static constexpr std::size_t kMaxDistinct = 64;

  std::vector<std::string> collected_from;  // "seccomp (user notification)"
  std::vector<std::string> not_collected;   // what was not recorded, and why
  std::vector<Refusal> items;               // distinct (source, call, process), first seen first
  std::uint64_t more = 0;                   // refusals past the cap of distinct items

  void add(const std::string& source, const std::string& call, const std::string& process) {
    for (Refusal& r : items) {
      if (r.source == source && r.call == call && r.process == process) {
        ++r.count;
        return;
      }
    }
    if (items.size() >= kMaxDistinct) {
      ++more;
      return;
    }
    items.push_back({source, call, process, 1});
  }

  std::uint64_t total() const {
    std::uint64_t n = more;
    for (const Refusal& r : items) n += r.count;
    return n;
  }

  // "ptrace x2 (strace), ioctl TIOCSTI (probe)"; empty when nothing was refused.
  std::string summary() const {
    std::string out;
    for (const Refusal& r : items) {
      if (!out.empty()) out += ", ";
      out += r.call;
      if (r.count > 1) out += " x" + std::to_string(r.count);
      if (!r.process.empty()) out += " (" + r.process + ")";
    }
    if (more) out += ", and " + std::to_string(more) + " more";
    return out;
  }
};

}  // namespace px::backend
