#include "backend/seal/seccomp.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "backend/seal/sys.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::seccomp {

namespace {

struct CtxDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

// Syscalls refused outright. Each would let a sealed process read or change
// what lies outside its seal, or reach kernel surface it has no need for.
// Other processes: refused unless Landlock scopes them to the run (prepare()).
const char* const kOtherProcesses[] = {"ptrace", "process_vm_readv", "process_vm_writev"};

const char* const kRefused[] = {
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",  // ops bypass per-syscall filtering
    "keyctl",
    "add_key",
    "request_key",  // the kernel keyring
    "bpf",
    "perf_event_open",
    "userfaultfd",  // kernel attack surface
    "open_by_handle_at",
    "name_to_handle_at",  // opens by handle, around paths
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "iopl",
    "ioperm",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",  // the view is fixed
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "setns",
};

// AF_MAX of this kernel generation (AF_MCTP is 45); a newer family is refused
// until it is known.
constexpr std::uint64_t kLastFamily = 46;

constexpr std::uint64_t kNamespaceFlags[] = {CLONE_NEWUSER,   CLONE_NEWNS,  CLONE_NEWNET,
                                             CLONE_NEWPID,    CLONE_NEWIPC, CLONE_NEWUTS,
                                             CLONE_NEWCGROUP, 0x00000080 /*CLONE_NEWTIME*/};

// A rule matching when every comparison holds (none: always).
Status rule(scmp_filter_ctx ctx, std::uint32_t action, const char* name,
            std::vector<scmp_arg_cmp> cmps = {}) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return Error::internal(std::string("seccomp: unknown syscall ") + name);
  const int rc = seccomp_rule_add_exact_array(ctx, action, nr, static_cast<unsigned>(cmps.size()),
                                              cmps.empty() ? nullptr : cmps.data());
  if (rc != 0) return sys_error(std::string("seccomp_rule_add ") + name, -rc);
  return ok();
}

// Built by hand: libseccomp's SCMP_A0 macros are C compound literals.
scmp_arg_cmp masked_eq(unsigned arg, std::uint64_t mask, std::uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value};
}

}  // namespace

Result<Program> prepare(bool ptrace_in_run, Network network) {
  std::unique_ptr<void, CtxDeleter> holder(seccomp_init(SCMP_ACT_ALLOW));
  scmp_filter_ctx ctx = holder.get();
  if (!ctx) return Error::internal("seccomp_init failed");
  // Only the native ABI: int 0x80 (ia32) and x32 syscall numbers meet the
  // bad-arch action, so a filter written for x86-64 numbers cannot be dodged.
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)); rc != 0)
    return sys_error("seccomp_attr_set BADARCH", -rc);
  // no_new_privs is set by launch before load, explicitly, so the filter must not flip it.
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); rc != 0)
    return sys_error("seccomp_attr_set NNP", -rc);

  // API level 5: the kernel and libseccomp both know user notification.
  const bool notifies = seccomp_api_get() >= 5;
  const std::uint32_t eperm = notifies ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kRefused) PX_TRY(rule(ctx, eperm, name));
  // With a Landlock domain the kernel lets a tracer reach only processes of
  // its own domain (Landlock's ptrace hooks, also for process_vm_* and
  // /proc/PID/mem): the run's own children, never the seal's init, which
  // created no domain, nor anything outside the pid namespace. Since Linux
  // 4.8 seccomp re-checks a system call a tracer changed, so a tracer inside
  // cannot make a traced process run a refused call.
  if (!ptrace_in_run)
    for (const char* name : kOtherProcesses) PX_TRY(rule(ctx, eperm, name));
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc
  // fall back to clone, whose flags argument is checked below.
  PX_TRY(rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3"));
  for (std::uint64_t flag : kNamespaceFlags) {
    PX_TRY(rule(ctx, eperm, "unshare", {masked_eq(0, flag, flag)}));
    PX_TRY(rule(ctx, eperm, "clone", {masked_eq(0, flag, flag)}));
  }
  // Socket families: the four a program needs (unix, IPv4, IPv6, netlink for
  // its own interfaces); every other family is kernel surface a sealed run has
  // no use for (AF_PACKET, AF_VSOCK, AF_ALG, ...), refused as unsupported. The
  // kernel reads the family as an int: low 32 bits compared, and any value with
  // high bits set or past the last family is refused too.
  for (const char* call : {"socket", "socketpair"}) {
    for (std::uint64_t family = 0; family < kLastFamily; ++family) {
      if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK) continue;
      PX_TRY(rule(ctx, notifies ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EAFNOSUPPORT), call,
                  {masked_eq(0, 0xFFFFFFFFULL, family)}));
    }
    PX_TRY(rule(ctx, notifies ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EAFNOSUPPORT), call,
                {scmp_arg_cmp{0, SCMP_CMP_GE, kLastFamily, 0}}));
  }
  // Without a network namespace of its own (a weaker seal) the run shares the
  // host's network, where Landlock governs TCP only (connect to the proxy's
  // port): an IPv4 or IPv6 socket is TCP or nothing. UDP (DNS to any server
  // included), raw and ICMP sockets, SCTP and MPTCP would reach the network
  // around the proxy. The destination of a sendto cannot be checked instead:
  // it lies in the process's memory, which it may change after a supervisor
  // read it. Names resolve at the proxy, so proxied programs need no DNS.
  if (network == Network::host) {
    const std::uint32_t eacces = notifies ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EACCES);
    for (const std::uint64_t family : {AF_INET, AF_INET6}) {
      const scmp_arg_cmp inet = masked_eq(0, 0xFFFFFFFFULL, family);
      // The type's low four bits (SOCK_NONBLOCK and SOCK_CLOEXEC lie above).
      for (std::uint64_t type = 0; type <= 0xF; ++type)
        if (type != SOCK_STREAM) PX_TRY(rule(ctx, eacces, "socket", {inet, masked_eq(1, 0xF, type)}));
      // A stream socket of another protocol than TCP (0 is TCP): anything
      // above 6 (with the high bits an int ignores, too) or 1-5.
      const scmp_arg_cmp stream = masked_eq(1, 0xF, SOCK_STREAM);
      PX_TRY(rule(ctx, eacces, "socket", {inet, stream, scmp_arg_cmp{2, SCMP_CMP_GT, IPPROTO_TCP, 0}}));
      for (std::uint64_t protocol = 1; protocol < IPPROTO_TCP; ++protocol)
        PX_TRY(rule(ctx, eacces, "socket", {inet, stream, masked_eq(2, 0xFFFFFFFFULL, protocol)}));
    }
  }
  // The kernel truncates the ioctl request to 32 bits, so compare the low 32
  // bits only: TIOCSTI | 0x100000000 is still TIOCSTI.
  for (std::uint64_t request : {static_cast<std::uint64_t>(TIOCSTI), static_cast<std::uint64_t>(TIOCLINUX)})
    PX_TRY(rule(ctx, eperm, "ioctl", {masked_eq(1, 0xFFFFFFFFULL, request)}));

  // Export to memory through a memfd (libseccomp 2.5 has no export-to-buffer).
  UniqueFd mem(::memfd_create("px-seccomp", MFD_CLOEXEC));
  if (!mem) return sys_error("memfd_create for the seccomp program");
  if (int rc = seccomp_export_bpf(ctx, mem.get()); rc != 0) return sys_error("seccomp_export_bpf", -rc);
  const off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0)
    return Error::internal("seccomp_export_bpf wrote " + std::to_string(size) + " bytes");
  Program program;
  program.notifies = notifies;
  program.instructions.resize(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (::pread(mem.get(), program.instructions.data(), static_cast<std::size_t>(size), 0) != size)
    return sys_error("read back the seccomp program");
  return program;
}

std::string encode(const Program& program) {
  std::string out(1, program.notifies ? '1' : '0');
  out.append(reinterpret_cast<const char*>(program.instructions.data()),
             program.instructions.size() * sizeof(sock_filter));
  return out;
}

Result<Program> decode(std::string_view bytes) {
  // From the supervisor, which the seal trusts; checked anyway, so a short or
  // torn message fails the set-up instead of loading part of a filter.
  const std::size_t size = bytes.empty() ? 0 : bytes.size() - 1;
  if (bytes.empty() || (bytes[0] != '0' && bytes[0] != '1') || size == 0 || size % sizeof(sock_filter) != 0 ||
      size / sizeof(sock_filter) > BPF_MAXINSNS)
    return Error::internal("the seccomp program from the supervisor is malformed (" +
                           std::to_string(bytes.size()) + " bytes)");
  Program program;
  program.notifies = bytes[0] == '1';
  program.instructions.resize(size / sizeof(sock_filter));
  std::memcpy(program.instructions.data(), bytes.data() + 1, size);
  return program;
}

void answer_in_kernel(Program& program) {
  for (sock_filter& insn : program.instructions)
    if (insn.code == (BPF_RET | BPF_K) && insn.k == SECCOMP_RET_USER_NOTIF)
      insn.k = SECCOMP_RET_ERRNO | EPERM;
  program.notifies = false;
}

Result<Loaded> load(Program& program) {
  Loaded loaded;
  sock_fprog prog{static_cast<unsigned short>(program.instructions.size()), program.instructions.data()};
  if (program.notifies) {
    const long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd >= 0) {
      loaded.listener = UniqueFd(static_cast<int>(fd));
      return loaded;
    }
    // One listener per filter chain: a sandbox around parallex may hold it.
    const int err = errno;
    if (err != EBUSY && err != EINVAL) return sys_error("seccomp(SET_MODE_FILTER, NEW_LISTENER)", err);
    loaded.not_collected = std::string("seccomp refusals are not recorded: the kernel refused a listener (") +
                           errno_name(err) + (err == EBUSY ? ": a sandbox around parallex holds one)" : ")");
    answer_in_kernel(program);
    prog.filter = program.instructions.data();
  } else {
    loaded.not_collected =
        "seccomp refusals are not recorded: this kernel or libseccomp lacks user notification";
  }
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return sys_error("seccomp(SET_MODE_FILTER)");
  return loaded;
}

Status refuse_ptrace() {
  // Hand-written (no allocation: called in the command's process after fork).
  // The build's own ABI only: the main filter refuses every other one anyway.
#if defined(__x86_64__)
  constexpr std::uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr std::uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#else
#error "refuse_ptrace: name this architecture's AUDIT_ARCH_* value"
#endif
  sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof insns / sizeof insns[0]), insns};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return sys_error("seccomp(SET_MODE_FILTER) refusing ptrace");
  return ok();
}

bool available() {
  // The seccomp call itself, as the seal makes it: a container's profile may
  // refuse it (EPERM) on a kernel that has filters.
  std::uint32_t action = SECCOMP_RET_ERRNO;
  return ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && seccomp_api_get() >= 1 &&
         ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

std::string container_profile() {
  // What the seal itself does with the mount API, pivot_root and setns (in
  // the run's own user namespace only): left to the container. Everything
  // else the run is refused, the container refuses too: neither Parallex
  // nor a sealed run uses it, and a container escape often starts there
  // (open_by_handle_at, keyctl, bpf, io_uring, userfaultfd, modules).
  const std::set<std::string_view> seal_needs = {"mount",     "umount2",       "pivot_root", "fsopen",
                                                 "fsconfig",  "fsmount",       "fspick",     "move_mount",
                                                 "open_tree", "mount_setattr", "setns"};
  std::set<std::string> refused;
  for (const char* name : kRefused)
    if (!seal_needs.count(name)) refused.insert(name);
  // An allowlist of every call libseccomp knows on the two architectures a
  // node runs, but those: a call newer than this list is refused (EPERM)
  // until Parallex knows it, as a runtime's own default profile does.
  std::set<std::string> allowed;
  for (const std::uint32_t arch : {SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64})
    for (int nr = 0; nr < 1024; ++nr) {
      std::unique_ptr<char, decltype(&std::free)> name(seccomp_syscall_resolve_num_arch(arch, nr),
                                                       &std::free);
      if (name && !refused.count(name.get())) allowed.insert(name.get());
    }
  std::string out = "{\n  \"defaultAction\": \"SCMP_ACT_ERRNO\",\n  \"defaultErrnoRet\": 1,\n";
  out += "  \"architectures\": [\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_AARCH64\"],\n";
  out += "  \"syscalls\": [\n    {\n      \"action\": \"SCMP_ACT_ALLOW\",\n      \"names\": [";
  bool first = true;
  for (const auto& name : allowed) {
    out += (first ? "\n        \"" : ",\n        \"") + name + "\"";
    first = false;
  }
  out += "\n      ]\n    }\n  ]\n}\n";
  return out;
}

}  // namespace px::seal::seccomp
