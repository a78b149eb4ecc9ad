#include "backend/seal/capabilities.hpp"

#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/seal/audit_log.hpp"
#include "backend/seal/host_environment.hpp"
#include "backend/seal/landlock.hpp"
#include "backend/seal/seccomp.hpp"
#include "backend/seal/sys.hpp"
#include "common/mountinfo.hpp"

namespace px::seal {

namespace {

// In a child: each namespace the seal uses, as `run` would create it. The exit
// code carries the first step that failed (0 = all worked).
int probe_namespaces() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER) == 0) {
      if (!write_file("/proc/self/setgroups", "deny") ||
          !write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
          !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
        ::_exit(2);
    } else if (uid != 0) {
      ::_exit(1);
    }
    if (::unshare(CLONE_NEWNS) != 0) ::_exit(3);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(3);
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(4);
    if (::unshare(CLONE_NEWPID) != 0) ::_exit(5);
    // The run's own /proc: a container that masks parts of its /proc
    // (maskedPaths) lets no new procfs be mounted (the kernel refuses one
    // that would show more than the container's).
    const pid_t init = ::fork();
    if (init == 0) {
      const int ctx = ::fsopen("proc", FSOPEN_CLOEXEC);
      const bool made = ctx >= 0 && ::fsconfig(ctx, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0 &&
                        ::fsmount(ctx, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) >= 0;
      ::_exit(made ? 0 : 6);
    }
    int status = 0;
    if (init < 0 || ::waitpid(init, &status, 0) != init || !WIFEXITED(status)) ::_exit(6);
    ::_exit(WEXITSTATUS(status));
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return 9;
  return WEXITSTATUS(status);
}

bool userns_works() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

bool cgroup2_mounted(std::string& where) {
  for (const MountInfo& m : read_mountinfo())
    if (m.fstype == "cgroup2") {
      where = m.mountpoint.string();
      return true;
    }
  return false;
}

constexpr const char* kUserNamespace = "user namespace: the seal's privileges exist only inside it";

}  // namespace

std::optional<Guarantee> userns_restricted() {
  const UsernsRestriction r = userns_restriction();
  if (!r.applies) return std::nullopt;
  return Guarantee{"namespaces.user", kUserNamespace, false, true, r.reason};
}

std::vector<Guarantee> detect_guarantees(bool probe) {
  std::vector<Guarantee> out;
  const bool root = ::getuid() == 0;
  // Ubuntu's AppArmor restriction lets unshare(CLONE_NEWUSER) succeed and
  // takes the namespace's capabilities away, so the seal would fail later with
  // EPERM: it is read from the sysctl and this process's label instead (no
  // fork, so a run's quick probe reads it too), and its reason carries the
  // exact fix (`run` refuses with the same words).
  const std::optional<Guarantee> restricted = userns_restricted();
  const int ns = restricted ? 1 : probe ? probe_namespaces() : 0;
  // A user namespace whose uid map cannot be written (root without
  // CAP_SETFCAP, Linux 5.12+: a container's default capabilities) is none.
  const bool userns = !restricted && (probe ? userns_works() && ns != 2 : true);
  const std::string max_userns = probe ? read_text("/proc/sys/user/max_user_namespaces") : "not read";
  if (restricted)
    out.push_back(*restricted);
  else
    out.push_back({"namespaces.user", kUserNamespace, userns || (root && ns != 2), !root,
                   userns ? "unprivileged user namespaces work (user.max_user_namespaces=" + max_userns + ")"
                   : ns == 2
                       ? "a user namespace is made but its uid map cannot be written (as root that needs "
                         "CAP_SETFCAP, which a container drops by default)"
                   : root ? "user namespaces are off; as root the seal drops every capability instead"
                          : "unshare(CLONE_NEWUSER) failed: user namespaces are off "
                            "(user.max_user_namespaces=" +
                                max_userns + ", or kernel.unprivileged_userns_clone)"});
  auto ns_row = [&](const char* id, const char* name, int failed_step, const char* what) {
    const bool enforced = ns == 0 || (ns > failed_step);
    out.push_back({id, name, enforced, true,
                   enforced  ? std::string(what) + " created in a probe"
                   : ns <= 2 ? "needs the user namespace, which is missing"
                             : std::string(what) + " could not be created"});
  };
  ns_row("namespaces.mount", "mount namespace: only granted paths are visible; secrets inside them hidden", 3,
         "a private mount namespace");
  ns_row("namespaces.network", "network namespace: only lo; the proxy is the only way out", 4,
         "a network namespace");
  ns_row("namespaces.pid", "pid namespace: no process outside the run is visible or signalable", 6,
         "a pid namespace and its own /proc");
  if (ns == 6)
    out.back().detail =
        "a pid namespace is made, but no /proc of its own can be mounted: this container masks parts of "
        "/proc. Unmask it (docker: --security-opt systempaths=unconfined; podman: --security-opt "
        "unmask=ALL; Kubernetes: procMount: Unmasked), or accept the seal without it "
        "(--allow-weaker-seal: the run sees the container's /proc)";

  const int abi = landlock::abi_version();
  auto ll = [&](const char* id, const char* name, int need, bool required, bool works = true) {
    const bool enforced = abi >= need && works;
    out.push_back(
        {id, name, enforced, required,
         enforced ? "Landlock ABI " + std::to_string(abi) + " (needs " + std::to_string(need) + ")"
         : abi == 0
             ? "Landlock is not enabled in this kernel (needs CONFIG_SECURITY_LANDLOCK and lsm=landlock)"
             : "Landlock ABI " + std::to_string(abi) + " is below " + std::to_string(need) +
                   (abi >= need ? " or the kernel rejected the feature" : "")});
  };
  ll("landlock.fs", "Landlock: files outside the grants cannot be opened", 1, true);
  ll("landlock.refer", "Landlock: no hard link or rename of a file into a grant from outside it", 2, false);
  ll("landlock.truncate", "Landlock: files outside the writable grants cannot be truncated", 3, false);
  ll("landlock.tcp",
     "Landlock: without a network namespace, TCP bind refused and connect only to the proxy's port", 4, false,
     landlock::supports_tcp());
  ll("landlock.ioctl_dev", "Landlock: device ioctls only on the run's terminal devices", 5, false);
  ll("landlock.scopes", "Landlock: no signal to, nor abstract socket of, a process outside the run", 6, false,
     landlock::supports_scopes());
  const bool sc = seccomp::available();
  out.push_back(
      {"seccomp",
       "seccomp: io_uring, bpf, keyctl, mount, new namespaces, TIOCSTI refused; ptrace only within the run; "
       "without a network namespace, no IPv4/IPv6 socket but TCP (no UDP or DNS around the proxy)",
       sc, true,
       sc ? "seccomp filters are available"
          : "the seccomp call fails: the kernel has no seccomp filters, or a seccomp profile around "
            "Parallex (a container's) refuses the call"});
  out.push_back(
      {"no_new_privs", "no_new_privs: setuid programs gain nothing", true, true, "always available"});
  std::string where;
  const bool cg = cgroup2_mounted(where);
  out.push_back({"cgroup2", "cgroup v2: the supervisor can freeze and kill the whole run", cg, false,
                 cg ? "cgroup2 mounted at " + where
                    : "no cgroup2 mount: the supervisor falls back to tracking processes"});
  // Tests of the refusal path on a machine that has everything:
  // PARALLEX_TEST_MISSING_GUARANTEE=ID reads that guarantee as missing. It
  // can only make runs refuse (or ask for --allow-weaker-seal), never widen one.
  if (const char* missing = std::getenv("PARALLEX_TEST_MISSING_GUARANTEE"); missing && *missing)
    for (auto& g : out)
      if (g.id == missing) {
        g.enforced = false;
        g.detail = "read as missing (PARALLEX_TEST_MISSING_GUARANTEE)";
      }
  return out;
}

std::vector<Guarantee> detect_refusal_recording() {
  std::vector<Guarantee> out;
  const bool notify = seccomp::available() && seccomp_api_get() >= 5;
  out.push_back(
      {"seccomp.record", "seccomp: every refused call (user notification)", notify, false,
       notify ? "seccomp user notification is available"
              : "this kernel or libseccomp lacks seccomp user notification: refusals are not recorded"});
  // Landlock reports denials only to the audit log: the run records them when
  // the log is on and this user may read it.
  {
    const audit::KernelAudit state = audit::kernel_audit();
    const int abi = landlock::abi_version();
    const bool on = abi >= 7 && state == audit::KernelAudit::on;
    out.push_back(
        {"landlock.audit", "Landlock: refused file and TCP accesses (from the kernel audit log)", on, false,
         abi < 7 ? "Landlock ABI " + std::to_string(abi) + " is below 7: it reports no denials"
         : on    ? "Landlock ABI " + std::to_string(abi) + ", kernel audit on"
         : state == audit::KernelAudit::off
             ? "the kernel audit is off (auditctl -e 1 turns it on); seccomp refusals are recorded anyway"
             : "reading the kernel audit log needs root (CAP_AUDIT_CONTROL, CAP_AUDIT_READ); seccomp "
               "refusals are recorded anyway"});
  }
  return out;
}

}  // namespace px::seal
