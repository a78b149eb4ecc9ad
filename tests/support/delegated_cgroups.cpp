#include "delegated_cgroups.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace px::test {

namespace {

// The mount point of the cgroup v2 hierarchy, and of the v1 one holding the
// pids controller (empty when there is none).
std::pair<fs::path, fs::path> cgroup_mounts() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  fs::path v2, v1_pids;
  while (std::getline(in, line)) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype, source, options;
    tail >> fstype >> source >> options;
    std::istringstream head(line.substr(0, dash));
    std::string id, parent, dev, root, mountpoint;
    head >> id >> parent >> dev >> root >> mountpoint;
    if (fstype == "cgroup2" && v2.empty()) v2 = mountpoint;
    if (fstype == "cgroup" && ("," + options + ",").find(",pids,") != std::string::npos) v1_pids = mountpoint;
  }
  return {v2, v1_pids};
}

void remove_tree(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && !e.is_symlink(ec)) remove_tree(e.path());
  // Kill what is left (a pass that failed half-way), then remove: EBUSY for
  // a moment while the kernel releases the last task.
  std::ifstream procs(dir / "cgroup.procs");
  for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
  for (int i = 0; i < 200 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

}  // namespace

DelegatedCgroups::DelegatedCgroups(const UnprivilegedUser& user) {
  const auto [v2, v1_pids] = cgroup_mounts();
  if (v2.empty()) {
    error_ = "no cgroup v2 hierarchy is mounted";
    return;
  }
  const std::string name = "px-escape-row-" + std::to_string(::getpid());
  const std::pair<fs::path, std::vector<const char*>> wanted[] = {
      {v2 / name, {"cgroup.procs", "cgroup.threads", "cgroup.subtree_control"}},
      {v1_pids.empty() ? fs::path() : v1_pids / name, {"cgroup.procs", "tasks"}}};
  for (const auto& [dir, files] : wanted) {
    if (dir.empty()) continue;
    if (::mkdir(dir.c_str(), 0755) != 0) {
      error_ = "mkdir " + dir.string() + ": " + std::strerror(errno);
      return;
    }
    dirs_.push_back(dir);
    if (::chown(dir.c_str(), user.uid, user.gid) != 0) {
      error_ = "chown " + dir.string() + ": " + std::strerror(errno);
      return;
    }
    for (const char* f : files)
      if (::chown((dir / f).c_str(), user.uid, user.gid) != 0 && errno != ENOENT) {
        error_ = "chown " + (dir / f).string() + ": " + std::strerror(errno);
        return;
      }
  }
}

DelegatedCgroups::~DelegatedCgroups() {
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) remove_tree(*it);
}

std::string DelegatedCgroups::describe() const {
  std::string out;
  for (const auto& d : dirs_) out += (out.empty() ? "" : " and ") + d.string();
  return "delegated to the user: " + out;
}

std::string DelegatedCgroups::enter() const {
  for (const auto& dir : dirs_) {
    const int fd = ::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    const bool entered = fd >= 0 && ::write(fd, "0", 1) == 1;
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (!entered) return "enter " + dir.string() + ": " + std::strerror(err);
  }
  return "";
}

}  // namespace px::test
