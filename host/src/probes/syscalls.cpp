// Kernel surface a sealed run has no use for, and the ABI tricks around the
// seccomp filter: each call made raw (syscall(2)), with arguments that would
// do something if the call got through.
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "probes/catalog.hpp"

namespace px::probes {
namespace {

char scratch[256];  // a zeroed argument block for the calls that take one

Answer sys_io_uring_setup(const Args&) {
  return by_errno(::syscall(SYS_io_uring_setup, 1, scratch));
}
Answer sys_bpf(const Args&) {
  return by_errno(::syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, scratch, 64));
}
Answer sys_userfaultfd(const Args&) {
  return by_errno(::syscall(SYS_userfaultfd, 0));
}
Answer sys_perf_event_open(const Args&) {
  return by_errno(::syscall(SYS_perf_event_open, scratch, 0, -1, -1, 0));
}
Answer sys_open_by_handle_at(const Args&) {
  return by_errno(::syscall(SYS_open_by_handle_at, AT_FDCWD, scratch, 0));
}
Answer sys_kexec_load(const Args&) {
  return by_errno(::syscall(SYS_kexec_load, 0, 0, 0, 0));
}
Answer sys_keyctl(const Args&) {
  return by_errno(::syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* @s */, 0));
}
Answer sys_add_key(const Args&) {
  return by_errno(::syscall(SYS_add_key, "user", "px", "x", 1, -3));
}
Answer sys_clone3(const Args&) {
  clone_args args{};
  args.exit_signal = SIGCHLD;
  const long rc = ::syscall(SYS_clone3, &args, sizeof args);
  if (rc == 0) ::_exit(0);
  return by_errno(rc);
}
Answer sys_unshare_user(const Args&) {
  return by_errno(::unshare(CLONE_NEWUSER));
}
// A mount namespace of one's own, where the seal's mounts could be undone.
Answer sys_unshare_mount_then_umount(const Args& a) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return by_errno(-1);
  return by_errno(::umount2(a.empty() ? "/tmp" : a[0].c_str(), MNT_DETACH));
}
Answer sys_umount(const Args& a) {
  return by_errno(::umount2(a.empty() ? "/tmp" : a[0].c_str(), MNT_DETACH));
}
Answer sys_mount(const Args&) {
  return by_errno(::mount("none", "/tmp", "tmpfs", 0, nullptr));
}
Answer sys_open_tree(const Args&) {
  return by_errno(::syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
}
Answer sys_fsopen(const Args&) {
  return by_errno(::syscall(SYS_fsopen, "tmpfs", 0));
}
Answer sys_setns(const Args&) {
  return by_errno(::setns(::open("/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC), 0));
}

// A newline, should it ever reach the terminal: nothing typed for the user.
Answer sys_tiocsti(unsigned long request) {
  char c = '\n';
  return by_errno(::syscall(SYS_ioctl, 0, request, &c));
}
Answer sys_tiocsti_low(const Args&) {
  return sys_tiocsti(TIOCSTI);
}
// The same request with a high bit the kernel ignores: a filter that compared
// all 64 bits would let it through.
Answer sys_tiocsti_high(const Args&) {
  return sys_tiocsti(static_cast<unsigned long>(TIOCSTI) | (1UL << 32));
}
Answer sys_tioclinux(const Args&) {
  return by_errno(::syscall(SYS_ioctl, 0, static_cast<unsigned long>(TIOCLINUX), scratch));
}

sigjmp_buf int80_fault;
void int80_on_segv(int) {
  siglongjmp(int80_fault, 1);
}

// getpid as an ia32 call (20): the filter's arch check must refuse it. A
// kernel without IA32 emulation has no int 0x80 entry: the instruction faults
// (SIGSEGV) and no call runs, answered NO_IA32.
Answer sys_int80(const Args&) {
  struct sigaction sa {};
  sa.sa_handler = int80_on_segv;
  ::sigaction(SIGSEGV, &sa, nullptr);
  if (sigsetjmp(int80_fault, 1)) return {"NO_IA32", ""};
  long rc;
  __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20L) : "memory");
  if (rc < 0) {
    errno = static_cast<int>(-rc);
    return by_errno(-1);
  }
  return {"OPEN", ""};
}

Answer sys_x32(const Args&) {
  return by_errno(::syscall(0x40000000L | SYS_getpid));
}

// socket(FAMILY): the family as the raw 64-bit argument (a number, 0x… too),
// of which the kernel reads only an int; OPEN, and the socket closed, when it
// was made.
Answer sys_socket(const Args& a) {
  const unsigned long family = std::strtoul(a[0].c_str(), nullptr, 0);
  const int type = (family == AF_PACKET || family == AF_NETLINK) ? SOCK_RAW
                   : family == AF_ALG                            ? SOCK_SEQPACKET
                                                                 : SOCK_STREAM;
  const long fd = ::syscall(SYS_socket, family, type | SOCK_CLOEXEC, 0);
  if (fd >= 0) ::close(static_cast<int>(fd));
  return by_errno(fd);
}

constexpr Probe kSyscallProbes[] = {
    {"io_uring_setup", "", 0, sys_io_uring_setup},
    {"bpf", "", 0, sys_bpf},
    {"userfaultfd", "", 0, sys_userfaultfd},
    {"perf_event_open", "", 0, sys_perf_event_open},
    {"open_by_handle_at", "", 0, sys_open_by_handle_at},
    {"kexec_load", "", 0, sys_kexec_load},
    {"keyctl", "", 0, sys_keyctl},
    {"add_key", "", 0, sys_add_key},
    {"clone3", "", 0, sys_clone3},
    {"unshare-user", "", 0, sys_unshare_user},
    {"unshare-mount-then-umount", "[PATH]", 0, sys_unshare_mount_then_umount},
    {"umount", "[PATH]", 0, sys_umount},
    {"mount", "", 0, sys_mount},
    {"open_tree", "", 0, sys_open_tree},
    {"fsopen", "", 0, sys_fsopen},
    {"setns", "", 0, sys_setns},
    {"tiocsti", "", 0, sys_tiocsti_low},
    {"tiocsti-high", "", 0, sys_tiocsti_high},
    {"tioclinux", "", 0, sys_tioclinux},
    {"int80", "", 0, sys_int80},
    {"x32", "", 0, sys_x32},
    {"socket", "FAMILY", 1, sys_socket},
};

}  // namespace

std::span<const Probe> syscall_probes() {
  return kSyscallProbes;
}

}  // namespace px::probes
