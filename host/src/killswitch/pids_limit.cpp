#include "killswitch/pids_limit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/mountinfo.hpp"
#include "killswitch/cgroup.hpp"
#include "killswitch/proc.hpp"

namespace px::killswitch {

namespace {

// The v1 hierarchy that holds the pids controller: its mount point and root.
struct V1Mount {
  fs::path mountpoint;
  std::string root;
};

std::optional<V1Mount> v1_pids_mount() {
  for (const MountInfo& m : read_mountinfo())
    if (m.fstype == "cgroup" && m.has_super_option("pids")) return V1Mount{m.mountpoint, m.root.string()};
  return std::nullopt;
}

// This process's cgroup in the v1 hierarchy of the pids controller.
std::string own_v1_pids_cgroup() {
  const auto text = read_proc_file("/proc/self/cgroup");
  std::istringstream in(text.value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    // N:controller[,controller]:path
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    if (has_word(line.substr(first + 1, second - first - 1), "pids", ',')) return line.substr(second + 1);
  }
  return {};
}

Status write_text(int dir, const char* file, const std::string& text) {
  UniqueFd fd(::openat(dir, file, O_WRONLY | O_CLOEXEC));
  if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return Error::io(std::string("write '") + text + "' to " + file, errno);
  return ok();
}

}  // namespace

PidsProbe probe_pids(const CgroupProbe& v2) {
  PidsProbe probe;
  if (backend::process_limit_hidden_for_tests("pids-cgroup")) {
    probe.why_not = "the pids controller is hidden from the supervisor (PARALLEX_TEST_PROCESS_LIMIT_WITHOUT)";
    return probe;
  }
  std::string v2_why;
  if (v2.usable) {
    if (has_word(read_proc_file((v2.parent / "cgroup.subtree_control").string()).value_or(""), "pids")) {
      probe.v2 = true;
      probe.how = "pids.max of the run's cgroup v2 (under " + v2.parent.string() + ")";
      return probe;
    }
    v2_why = "cgroup v2 at " + v2.mount.string() + " offers no pids controller to " + v2.parent.string();
  } else {
    v2_why = "no cgroup v2 the supervisor may write";
  }
  const auto mount = v1_pids_mount();
  if (!mount) {
    probe.why_not = v2_why + ", and no v1 pids hierarchy is mounted";
    return probe;
  }
  if (::geteuid() == 0) {
    const fs::path parent = mount->mountpoint / "parallex";
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      probe.why_not = v2_why + ", and " + parent.string() + " cannot be made: " + std::strerror(errno);
      return probe;
    }
    probe.v1 = true;
    probe.parent = parent;
    probe.how = "pids.max of the run's cgroup in the v1 pids hierarchy (under " + parent.string() + ")";
    return probe;
  }
  std::string own = own_v1_pids_cgroup();
  if (mount->root != "/" && own.rfind(mount->root, 0) == 0) own = own.substr(mount->root.size());
  const fs::path dir = mount->mountpoint / fs::path(own).relative_path();
  if (own.empty() || ::access(dir.c_str(), W_OK) != 0 ||
      ::access((dir / "cgroup.procs").c_str(), W_OK) != 0) {
    probe.why_not = v2_why + ", and your v1 pids cgroup " + (own.empty() ? std::string("(none)") : own) +
                    " is not delegated to you";
    return probe;
  }
  probe.v1 = true;
  probe.parent = dir;
  probe.prefix = "parallex-";
  probe.how = "pids.max of the run's cgroup in the v1 pids hierarchy (under your cgroup " + own + ")";
  return probe;
}

Result<PidsCgroupV1> PidsCgroupV1::create(const PidsProbe& where, const std::string& run_id,
                                          std::uint64_t max) {
  if (!where.v1) return Error::unsupported(where.why_not);
  PidsCgroupV1 cg;
  cg.path_ = where.parent / (where.prefix + run_id);
  if (::mkdir(cg.path_.c_str(), 0755) != 0)
    return Error::io("create the run's pids cgroup " + cg.path_.string(), errno);
  cg.dir_ = UniqueFd(::open(cg.path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const int err = errno;
  if (!cg.dir_) {
    ::rmdir(cg.path_.c_str());
    cg.path_.clear();
    return Error::io("open the run's pids cgroup", err);
  }
  if (auto set = write_text(cg.dir_.get(), "pids.max", std::to_string(max)); !set) {
    cg.remove();
    return Error::io("set pids.max of " + cg.path_.string() + ": " + set.error().message, 0);
  }
  return cg;
}

PidsCgroupV1::~PidsCgroupV1() {
  remove();
}

void PidsCgroupV1::remove() {
  if (path_.empty()) return;
  dir_.reset();
  // EBUSY for a moment after the last task exited: the kernel is still releasing it.
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (::rmdir(path_.c_str()) == 0 || errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  path_.clear();
}

std::optional<backend::Guarantee> process_limit_guarantee(const backend::Backend& backend,
                                                          backend::Backend::Probe probe) {
  auto mechanisms = backend.process_limit_mechanisms(probe);
  if (!mechanisms) return std::nullopt;
  const PidsProbe pids = probe_pids(probe_cgroup());
  if (pids.v2) mechanisms->insert(mechanisms->begin(), {kPidsCgroupV2, pids.how});
  if (pids.v1) mechanisms->insert(mechanisms->begin(), {kPidsCgroupV1, pids.how});
  backend::Guarantee g;
  g.id = "limits.processes";
  g.name =
      "process limit: a run's processes and threads are bounded (limits.processes, 4096 by default), so a "
      "fork bomb stops there";
  g.required = true;
  g.enforced = !mechanisms->empty();
  for (const auto& m : *mechanisms) {
    g.held_by.push_back(m.id);
    g.detail += (g.detail.empty() ? "held here by " : "; and by ") + m.description;
  }
  if (!g.enforced)
    g.detail =
        "nothing holds it here: " + pids.why_not + "; " +
        (::geteuid() == 0 ? "RLIMIT_NPROC never binds the host's root"
                          : "RLIMIT_NPROC counts per user namespace only from Linux 5.14") +
        "; and a pid namespace has a pid_max of its own only from Linux 6.14. Fix: give Parallex a pids "
        "controller it may write (as root: cgroup v2 with the pids controller, or the v1 pids hierarchy "
        "mounted; as a user: `systemd-run --user --scope -p Delegate=yes parallex ...`), or use Linux 6.14 "
        "or later";
  return g;
}

std::vector<backend::Guarantee> seal_guarantees(const backend::Backend& backend,
                                                backend::Backend::Probe probe) {
  auto out = backend.guarantees(probe);
  // The backend sees a cgroup v2 mount; whether this user may make the run's
  // cgroup there is for the supervisor to say. A user whose cgroup is not
  // delegated gets the process-tree fallback: never "enforced" for that.
  for (auto& g : out)
    if (g.id == "cgroup2" && g.enforced)
      if (const auto cg = probe_cgroup(); !cg.usable) {
        g.enforced = false;
        g.detail += ", but " + cg.why_not;
      }
  if (auto limit = process_limit_guarantee(backend, probe)) {
    if (const char* missing = std::getenv("PARALLEX_TEST_MISSING_GUARANTEE");
        missing && limit->id == missing) {
      limit->enforced = false;
      limit->detail = "read as missing (PARALLEX_TEST_MISSING_GUARANTEE)";
    }
    out.push_back(std::move(*limit));
  }
  return out;
}

}  // namespace px::killswitch
