#pragma once
// The run's process limit (policy.hpp: ProcessLimit) in a pids cgroup, and
// the process limit as one guarantee of the seal. The seal holds the limit
// itself where the kernel lets it (backend/seal/process_limit.hpp:
// RLIMIT_NPROC in the run's user namespace, pid_max of its pid namespace);
// the supervisor adds the pids controller where it may write one:
//  - cgroup v2: pids.max of the run's own cgroup (killswitch/cgroup.hpp),
//    where the pids controller is enabled for the run cgroups' parent;
//  - else the v1 pids hierarchy (the hybrid layout of Ubuntu 20.04, RHEL 8
//    and many CI images: cgroup v2 holds no controller there): a cgroup of the
//    run's own, <v1 pids mount>/parallex/<run-id> as root, or
//    <your v1 pids cgroup>/parallex-<run-id> when that cgroup is delegated to
//    you (writable), with pids.max. The seal's first process writes itself
//    into it before it does anything else (LaunchRequest::pids_cgroup_fd);
//    v1 has no CLONE_INTO_CGROUP.
// Either counts every task of the run (threads too) and makes fork fail with
// EAGAIN at the limit; the run cannot reach it (the seal shows no cgroupfs it
// may write).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "killswitch/cgroup.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

// Ids of the supervisor's mechanisms, as the record and `check --json` name them.
inline constexpr const char* kPidsCgroupV2 = "pids-cgroup-v2";
inline constexpr const char* kPidsCgroupV1 = "pids-cgroup-v1";

// Where this process may put a run's pids cgroup, or why nowhere.
struct PidsProbe {
  bool v2 = false;      // the run's cgroup v2 gets pids.max (`where` below is for v1)
  bool v1 = false;      // a cgroup of its own in the v1 pids hierarchy
  fs::path parent;      // v1: where run cgroups are made
  std::string prefix;   // v1: "" under .../parallex, "parallex-" when delegated
  std::string how;      // "cgroup v2 at /sys/fs/cgroup/parallex", "cgroup v1 at /sys/fs/cgroup/pids/parallex"
  std::string why_not;  // when neither: a sentence with the fix
};
PidsProbe probe_pids(const CgroupProbe& v2);

// The run's own cgroup in the v1 pids hierarchy, with pids.max; removed (once
// empty) when destroyed.
class PidsCgroupV1 {
 public:
  static Result<PidsCgroupV1> create(const PidsProbe& where, const std::string& run_id, std::uint64_t max);
  PidsCgroupV1(PidsCgroupV1&& other) noexcept
      : path_(std::exchange(other.path_, {})), dir_(std::move(other.dir_)) {}
  PidsCgroupV1& operator=(PidsCgroupV1&& other) noexcept {
    if (this != &other) {
      remove();
      path_ = std::exchange(other.path_, {});
      dir_ = std::move(other.dir_);
    }
    return *this;
  }
  PidsCgroupV1(const PidsCgroupV1&) = delete;
  PidsCgroupV1& operator=(const PidsCgroupV1&) = delete;
  ~PidsCgroupV1();
  int fd() const { return dir_.get(); }
  const fs::path& path() const { return path_; }
  // rmdir, retried for a moment while the kernel releases the last task.
  void remove();

 private:
  PidsCgroupV1() = default;
  fs::path path_;
  UniqueFd dir_;
};

// The process limit as a guarantee of `backend` on this machine: enforced
// when at least one mechanism holds it (the backend's own and the pids
// cgroup's, each named in `detail`), required (a run refuses without it
// unless --allow-weaker-seal). Nullopt for a backend without a process limit.
std::optional<backend::Guarantee> process_limit_guarantee(const backend::Backend& backend,
                                                          backend::Backend::Probe probe);
// `backend`'s guarantees and the process limit's, as `parallex check` and a
// run's start weigh them.
std::vector<backend::Guarantee> seal_guarantees(const backend::Backend& backend,
                                                backend::Backend::Probe probe);

}  // namespace px::killswitch
