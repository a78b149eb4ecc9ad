/* Dangerous syscalls and ABI tricks. Usage: syscall_probe NAME
 * NAME: io_uring_setup bpf userfaultfd perf_event_open open_by_handle_at
 *       kexec_load keyctl add_key clone3 unshare_user unshare_mount_then_umount
 *       mount open_tree fsopen setns tiocsti tiocsti_high tioclinux int80 x32
 *       socket FAMILY (a number; OK and the fd closed when it opened) */
#include "probe.h" /* first: it defines _GNU_SOURCE */

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

static sigjmp_buf segv_jump;
static void on_segv(int sig) {
  (void)sig;
  siglongjmp(segv_jump, 1);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* n = argv[1];
  char buf[256] = {0};
  if (!strcmp(n, "io_uring_setup")) return px_errno_result(syscall(SYS_io_uring_setup, 1, buf));
  if (!strcmp(n, "bpf")) return px_errno_result(syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, buf, 64));
  if (!strcmp(n, "userfaultfd")) return px_errno_result(syscall(SYS_userfaultfd, 0));
  if (!strcmp(n, "perf_event_open")) return px_errno_result(syscall(SYS_perf_event_open, buf, 0, -1, -1, 0));
  if (!strcmp(n, "open_by_handle_at")) return px_errno_result(syscall(SYS_open_by_handle_at, AT_FDCWD, buf, 0));
  if (!strcmp(n, "kexec_load")) return px_errno_result(syscall(SYS_kexec_load, 0, 0, 0, 0));
  if (!strcmp(n, "keyctl")) return px_errno_result(syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* @s */, 0));
  if (!strcmp(n, "add_key")) return px_errno_result(syscall(SYS_add_key, "user", "px", "x", 1, -3));
  if (!strcmp(n, "clone3")) {
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = 17;
    long rc = syscall(SYS_clone3, &args, sizeof args);
    if (rc == 0) _exit(0);
    return px_errno_result(rc);
  }
  if (!strcmp(n, "unshare_user")) return px_errno_result(unshare(CLONE_NEWUSER));
  if (!strcmp(n, "unshare_mount_then_umount")) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return px_errno_result(-1);
    return px_errno_result(umount2(argc > 2 ? argv[2] : "/tmp", MNT_DETACH));
  }
  if (!strcmp(n, "umount")) return px_errno_result(umount2(argc > 2 ? argv[2] : "/tmp", MNT_DETACH));
  if (!strcmp(n, "mount")) return px_errno_result(mount("none", "/tmp", "tmpfs", 0, 0));
  if (!strcmp(n, "open_tree")) return px_errno_result(syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* CLONE */));
  if (!strcmp(n, "fsopen")) return px_errno_result(syscall(SYS_fsopen, "tmpfs", 0));
  if (!strcmp(n, "setns")) return px_errno_result(setns(open("/proc/1/ns/mnt", O_RDONLY), 0));
  if (!strcmp(n, "tiocsti")) return px_errno_result(syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, "x"));
  if (!strcmp(n, "tiocsti_high"))
    return px_errno_result(syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | 0x100000000UL, "x"));
  if (!strcmp(n, "tioclinux")) return px_errno_result(syscall(SYS_ioctl, 0, (unsigned long)TIOCLINUX, buf));
  if (!strcmp(n, "int80")) {
    /* getpid as an ia32 syscall (20): the filter's arch check must refuse it.
     * A kernel without IA32 emulation has no int 0x80 entry: the instruction
     * faults (SIGSEGV) and no call runs, which the probe reports as NO_IA32. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(segv_jump, 1)) return px_result("NO_IA32");
    long rc;
    __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20L) : "memory");
    if (rc < 0) { errno = (int)-rc; return px_errno_result(-1); }
    return px_result("OPEN");
  }
  if (!strcmp(n, "socket") && argc > 2) {
    /* The family as the raw 64-bit argument: the kernel reads only an int. */
    const unsigned long family = strtoul(argv[2], NULL, 0);
    const int type = (family == AF_PACKET || family == AF_NETLINK) ? SOCK_RAW
                     : family == AF_ALG                           ? SOCK_SEQPACKET
                                                                  : SOCK_STREAM;
    const long fd = syscall(SYS_socket, family, type, 0);
    if (fd >= 0) close((int)fd);
    return px_errno_result(fd < 0 ? -1 : 0);
  }
  if (!strcmp(n, "x32")) return px_errno_result(syscall(0x40000000L | SYS_getpid));
  return 2;
}
