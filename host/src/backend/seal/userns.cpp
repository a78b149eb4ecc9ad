#include "backend/seal/userns.hpp"

#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "backend/seal/sys.hpp"

namespace px::seal::userns {

Result<Mode> enter() {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWPID) == 0) {
    // Safe: we map only our own ids, which any process may do for a namespace
    // it created; setgroups must be denied first (CVE-2014-8989), so the
    // process cannot drop a group that a file's ACL uses to deny it.
    PX_TRY(write_file("/proc/self/setgroups", "deny"));
    PX_TRY(write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1"));
    PX_TRY(write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"));
    return Mode::user_namespace;
  }
  const int err = errno;
  if (uid == 0 && ::unshare(CLONE_NEWPID) == 0) return Mode::root_only;
  return Error{ErrorKind::unsupported, sys_error("unshare(CLONE_NEWUSER|CLONE_NEWPID)", err).message +
                                           "; unprivileged user namespaces are off (see `parallex check`)"};
}

Status drop_capabilities() {
  // A capability already out of the bounding set needs no drop (a container
  // that dropped them all may also lack CAP_SETPCAP, which a drop needs). One
  // still in it must go: uid 0 regains every bounding capability at exec,
  // no_new_privs or not.
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1) continue;  // not held, or past the kernel's last
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && ::getuid() == 0)
      return sys_error("prctl(PR_CAPBSET_DROP, " + std::to_string(cap) + ")");
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return sys_error("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return sys_error("capset (clear all)");
  return ok();
}

}  // namespace px::seal::userns
