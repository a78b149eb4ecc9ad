#include "killswitch/cgroup.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/mountinfo.hpp"
#include "killswitch/proc.hpp"

namespace px::killswitch {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<std::string> read_text(const fs::path& path) {
  return read_proc_file(path.string());
}

// cgroupfs wants one write per value, without a stream's buffering games.
Status write_text(const fs::path& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return Error::io("open " + path.string(), errno);
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return Error::io("write '" + text + "' to " + path.string(), errno);
  return ok();
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

// Enables what the kernel offers of `wanted` for the children of `dir`.
void enable_controllers(const fs::path& dir, std::initializer_list<const char*> wanted) {
  // Enabled once, by the first run: later runs only read (a write to
  // cgroup.subtree_control costs the kernel far more than a read).
  const auto enabled = read_text(dir / "cgroup.subtree_control").value_or("");
  if (std::all_of(wanted.begin(), wanted.end(), [&](const char* c) { return has_word(enabled, c); })) return;
  const auto available = read_text(dir / "cgroup.controllers").value_or("");
  for (const char* c : wanted)
    if (has_word(available, c) && !has_word(enabled, c))
      (void)write_text(dir / "cgroup.subtree_control", std::string("+") + c);
}

struct MountEntry {
  fs::path root;
  fs::path mountpoint;
};

std::optional<MountEntry> cgroup2_mount_entry() {
  for (const MountInfo& m : read_mountinfo())
    if (m.fstype == "cgroup2") return MountEntry{m.root, m.mountpoint};
  return std::nullopt;
}

}  // namespace

bool cgroup_disabled_by_env() {
  const char* v = std::getenv("PARALLEX_NO_CGROUP");
  return v && *v && std::strcmp(v, "0") != 0;
}

std::optional<fs::path> find_cgroup2_mount() {
  auto e = cgroup2_mount_entry();
  if (!e) return std::nullopt;
  return e->mountpoint;
}

CgroupProbe probe_cgroup() {
  CgroupProbe probe;
  if (cgroup_disabled_by_env()) {
    probe.why_not = "PARALLEX_NO_CGROUP is set, so runs are tracked by the process-tree fallback";
    return probe;
  }
  const auto entry = cgroup2_mount_entry();
  if (!entry) {
    probe.why_not =
        "no cgroup v2 filesystem is mounted (see /proc/self/mountinfo); mount cgroup2 to track runs "
        "without gaps";
    return probe;
  }
  probe.mount = entry->mountpoint;
  if (::geteuid() == 0) {
    const fs::path parent = probe.mount / "parallex";
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      probe.why_not = "cannot create " + parent.string() + ": " + std::strerror(errno) +
                      " (cgroupfs read-only?); runs are tracked by the process-tree fallback";
      return probe;
    }
    enable_controllers(probe.mount, {"pids", "memory"});
    enable_controllers(parent, {"pids", "memory"});
    probe.usable = true;
    probe.parent = parent;
    probe.how = "root: run cgroups under " + parent.string();
    return probe;
  }
  // A user: our own cgroup, when systemd delegated it to us.
  std::string own = proc_cgroup_v2(::getpid());
  const std::string mount_root = entry->root.string();
  if (own.empty()) {
    probe.why_not = "this process is in no cgroup v2 (hybrid set-up without a unified hierarchy?)";
    return probe;
  }
  if (mount_root != "/" && own.rfind(mount_root, 0) == 0) own = own.substr(mount_root.size());
  const fs::path dir = probe.mount / fs::path(own).relative_path();
  if (::access(dir.c_str(), W_OK) != 0 || ::access((dir / "cgroup.procs").c_str(), W_OK) != 0) {
    probe.why_not = "your cgroup " + own +
                    " is not delegated to you; start parallex in a delegated scope, e.g. `systemd-run --user "
                    "--scope -p Delegate=yes parallex ...`, or runs are tracked by the process-tree fallback";
    return probe;
  }
  // pids only: a threaded controller, which a cgroup may enable for its
  // children while it holds processes itself (a domain one, memory, may not).
  enable_controllers(dir, {"pids"});
  probe.usable = true;
  probe.parent = dir;
  probe.prefix = "parallex-";
  probe.how = "delegated: run cgroups under your cgroup " + own;
  return probe;
}

Result<RunCgroup> RunCgroup::create(const CgroupProbe& where, const std::string& name,
                                    const CgroupLimits& limits) {
  if (!where.usable) return Error::unsupported(where.why_not);
  if (!valid_name(name))
    return Error::invalid("'" + name + "' cannot name a cgroup: use letters, digits, '-', '_'.");
  RunCgroup cg;
  cg.path_ = where.parent / (where.prefix + name);
  if (::mkdir(cg.path_.c_str(), 0755) != 0) {
    const int err = errno;
    if (err == EEXIST)
      return Error::conflict("the cgroup " + cg.path_.string() + " exists already: is run " + name +
                             " still going?");
    return Error::io("create the run's cgroup " + cg.path_.string(), err);
  }
  cg.dir_ = UniqueFd(::open(cg.path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cg.dir_) {
    const int err = errno;
    ::rmdir(cg.path_.c_str());
    cg.removed_ = true;
    return Error::io("open the run's cgroup " + cg.path_.string(), err);
  }
  cg.events_watch_ = UniqueFd(::openat(cg.dir_.get(), "cgroup.events", O_RDONLY | O_CLOEXEC));
  if (limits.pids_max && fs::exists(cg.path_ / "pids.max")) {
    if (write_text(cg.path_ / "pids.max", std::to_string(*limits.pids_max)))
      cg.applied_.push_back("pids.max=" + std::to_string(*limits.pids_max));
  }
  if (limits.memory_max && fs::exists(cg.path_ / "memory.max")) {
    if (write_text(cg.path_ / "memory.max", std::to_string(*limits.memory_max)))
      cg.applied_.push_back("memory.max=" + std::to_string(*limits.memory_max));
  }
  return cg;
}

Result<RunCgroup> RunCgroup::existing(const fs::path& path) {
  RunCgroup cg;
  cg.owned_ = false;
  cg.path_ = path;
  cg.dir_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!cg.dir_) return Error::io("open the run's cgroup " + path.string(), errno);
  cg.events_watch_ = UniqueFd(::openat(cg.dir_.get(), "cgroup.events", O_RDONLY | O_CLOEXEC));
  if (!cg.events_watch_) return Error::io("open " + (path / "cgroup.events").string(), errno);
  return cg;
}

RunCgroup::~RunCgroup() {
  if (owned_ && !path_.empty() && !removed_) (void)remove();
}

Status RunCgroup::add(pid_t pid) {
  return write_text(path_ / "cgroup.procs", std::to_string(pid));
}

std::vector<pid_t> RunCgroup::pids() const {
  std::vector<pid_t> out;
  std::istringstream in(read_text(path_ / "cgroup.procs").value_or(""));
  pid_t p = 0;
  while (in >> p) out.push_back(p);
  return out;
}

Result<bool> RunCgroup::events_flag(const char* key) const {
  const auto text = read_text(path_ / "cgroup.events");
  if (!text) return Error::io("read " + (path_ / "cgroup.events").string(), errno);
  std::istringstream in(*text);
  std::string k;
  int v = 0;
  while (in >> k >> v)
    if (k == key) return v != 0;
  return Error::unsupported("the kernel's cgroup.events has no '" + std::string(key) +
                            "' (Linux 5.2 or later needed)");
}

Result<bool> RunCgroup::populated() const {
  return events_flag("populated");
}
Result<bool> RunCgroup::frozen() const {
  return events_flag("frozen");
}

Status RunCgroup::wait_events(const char* key, bool value, std::chrono::milliseconds timeout) const {
  // The kernel rate-limits cgroup.events notifications to one per 20 ms per
  // file (CGROUP_FILE_NOTIFY_MIN_INTV), so a freeze right after a thaw would
  // be reported up to 20 ms late. The flag is re-read every 100 us for the
  // first 50 ms (a freeze normally completes in well under a millisecond),
  // then on the file's change notifications (POLLPRI; re-armed by reading it,
  // before the first check, so none is lost).
  const UniqueFd& in = events_watch_;
  char drain[256];
  const auto rearm = [&] {
    if (in) (void)!::pread(in.get(), drain, sizeof drain, 0);
  };
  rearm();
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  for (;;) {
    PX_TRY_ASSIGN(const bool now, events_flag(key));
    if (now == value) return ok();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      return Error::io("wait for '" + std::string(key) + " " + (value ? "1" : "0") + "' in " +
                           (path_ / "cgroup.events").string() + " (timed out)",
                       ETIMEDOUT);
    if (Clock::now() - start < std::chrono::milliseconds(50) || !in) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    pollfd p{in.get(), POLLPRI, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long>(left, 50))) > 0) rearm();
  }
}

Status RunCgroup::freeze(std::chrono::milliseconds timeout) {
  PX_TRY(write_text(path_ / "cgroup.freeze", "1"));
  return wait_events("frozen", true, timeout);
}

Status RunCgroup::thaw(std::chrono::milliseconds timeout) {
  PX_TRY(write_text(path_ / "cgroup.freeze", "0"));
  return wait_events("frozen", false, timeout);
}

Status RunCgroup::kill(std::chrono::milliseconds timeout) {
  if (auto r = write_text(path_ / "cgroup.kill", "1"); !r) {
    // Before Linux 5.14 there is no cgroup.kill: freeze, SIGKILL each, thaw.
    if (fs::exists(path_ / "cgroup.kill")) return r;
    (void)write_text(path_ / "cgroup.freeze", "1");
    for (const pid_t p : pids()) ::kill(p, SIGKILL);
    (void)write_text(path_ / "cgroup.freeze", "0");
  }
  return wait_events("populated", false, timeout);
}

Status RunCgroup::remove() {
  if (!owned_ || removed_ || path_.empty()) return ok();
  if (auto pop = populated(); pop && pop.value()) PX_TRY(kill());
  for (int attempt = 0;; ++attempt) {
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) break;
    // EBUSY right after the last task exited: the kernel is still releasing it.
    if (errno != EBUSY || attempt > 200) return Error::io("remove the run's cgroup " + path_.string(), errno);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  removed_ = true;
  dir_.reset();
  events_watch_.reset();
  return ok();
}

int enter_cgroup(int cgroup_fd) noexcept {
  const int fd = ::openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  const ssize_t n = ::write(fd, "0", 1);
  const int err = errno;
  ::close(fd);
  return n == 1 ? 0 : -err;
}

bool task_is_cgroup_frozen(pid_t pid) {
  const auto st = read_proc_stat(pid);
  if (!st || st->state == 'R') return false;
  const auto wchan = read_text("/proc/" + std::to_string(pid) + "/wchan").value_or("");
  if (wchan == "do_freezer_trap" || wchan == "get_signal") return true;
  // A parent waiting for its vfork child counts as frozen for the cgroup
  // (wait_for_vfork_done enters the frozen state; it is inlined in kernel_clone).
  return st->state == 'D' && (wchan == "kernel_clone" || wchan == "wait_for_vfork_done");
}

CgroupUsage read_cgroup_usage(const fs::path& cgroup) {
  CgroupUsage usage;
  std::ifstream cpu(cgroup / "cpu.stat");
  std::string key;
  std::uint64_t value = 0;
  while (cpu >> key >> value)
    if (key == "usage_usec") {
      usage.cpu_seconds = static_cast<double>(value) / 1e6;
      break;
    }
  std::ifstream memory(cgroup / "memory.current");
  if (memory >> value) usage.memory_bytes = value;
  return usage;
}

}  // namespace px::killswitch
