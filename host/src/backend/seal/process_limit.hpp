#pragma once
// The run's process limit (policy.hpp: ProcessLimit), as far as the seal holds
// it itself; the pids cgroup is the supervisor's (killswitch/pids_limit.hpp).
// Each mechanism counts tasks (a thread is one) and makes fork/clone fail
// with EAGAIN at the limit:
//  - RLIMIT_NPROC, set in the outer process once it is in the run's own user
//    namespace. Since Linux 5.14 the kernel counts it per user namespace
//    (ucounts): only the run's processes count, never the user's others, and
//    a parent namespace's limit still holds above it. The run cannot raise it
//    (a hard limit rises only with CAP_SYS_RESOURCE in the host's namespace).
//    The kernel never applies it to the host's root (copy_process exempts
//    INIT_USER, uid 0 of the initial namespace, whatever namespace it is in),
//    so a supervisor whose uid is the host's 0 gets nothing from it.
//  - Without a user namespace of the run's own (a container that forbids
//    them, with the weaker seal accepted): RLIMIT_NPROC of the user itself.
//    The kernel then counts every task of the user's real uid in this user
//    namespace, the run's and the user's others alike, so the limit is set
//    to the tasks the user has now plus the run's limit: the run gets at
//    most its limit (fewer if the user's other processes grow meanwhile),
//    and a fork bomb stops there. Counted from /proc, which may not show
//    tasks of the same uid in other pid namespaces: the bound is then lower,
//    never higher. Not for the host's root (exempt, as above).
//  - pid_max of the run's pid namespace (Linux 6.14 and later: each pid
//    namespace has its own). No pid at or above it is given out there, so at
//    most pid_max - 1 processes live at once; once 300 pids were given out
//    the kernel starts again at 300 when it wraps (pids below stay reserved),
//    so it is set to the limit + 300: the run always gets the limit, and
//    reaches at most 299 more. Root of the run's user namespace may write
//    it, so /proc/sys is bound read-only in the view once it is set.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"

namespace px::seal::process_limit {

// The mechanisms' ids, as the run record and `check --json` name them.
inline constexpr const char* kRlimit = "rlimit-nproc";
inline constexpr const char* kPidMax = "pid-max";
inline constexpr const char* kRlimitUser = "rlimit-nproc-user";

// The mechanism of `id` (kRlimit, kPidMax) with its description.
backend::ProcessLimitMechanism mechanism(const std::string& id);

// What pid_max is set to for a limit of `max`.
std::uint64_t pid_max_for(std::uint64_t max);

// Whether each mechanism holds for this user on this kernel. `thorough`
// tries it for real in a short-lived child (`parallex check`); otherwise the
// kernel's version and the user's id decide (a run's start: the seal still
// fails closed when a mechanism it counted on cannot be set).
bool rlimit_holds(bool thorough);
bool pid_max_holds(bool thorough);
// RLIMIT_NPROC of the user, for a seal without namespaces: the user is not the
// host's root (and, `thorough`, a child limited so really stops forking).
bool user_rlimit_holds(bool thorough);
std::vector<backend::ProcessLimitMechanism> available(bool thorough);

// In the outer process, just after it entered the run's user namespace:
// RLIMIT_NPROC (soft and hard) to `max`, or the hard limit it has if that is
// lower.
Status limit_nproc(std::uint64_t max);
// In the outer process of a seal without namespaces: RLIMIT_NPROC (soft and
// hard) to the tasks of this real uid now (read from /proc) plus `max`, or
// the hard limit it has if that is lower.
Status limit_nproc_of_user(std::uint64_t max);
// In the init, once the run's /proc is mounted in the view at `view_root`:
// the pid namespace's pid_max for `max`, then /proc/sys read-only.
Status limit_pid_numbers(int view_root, std::uint64_t max);

}  // namespace px::seal::process_limit
