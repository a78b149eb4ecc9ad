#pragma once
// seccomp: the syscalls a sealed command may not make. The filter is compiled
// to BPF in the supervisor (prepare) while the seal builds its view, sent to
// the seal's init with the go-ahead (encode, decode), and loaded by the
// command's process as the very last step before execve (load).
#include <linux/filter.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::seccomp {

struct Program {
  std::vector<sock_filter> instructions;
  // Refused calls wait for the supervisor's answer (SECCOMP_RET_USER_NOTIF),
  // which records them: the only way to learn what the seal refused without
  // the kernel's audit log. The answer is always the refusal.
  bool notifies = false;
};

// The filter as loaded: the listener the supervisor answers refusals on (empty
// when refusals go unrecorded), and why not when they do.
struct Loaded {
  UniqueFd listener;
  std::string not_collected;
};

// Refuses (EPERM unless noted): ptrace and process_vm_readv/writev (unless
// `ptrace_in_run`), io_uring_*,
// keyctl/add_key/request_key, bpf, perf_event_open, userfaultfd,
// open_by_handle_at, kexec_*, module loading, reboot, swapon/off, chroot,
// mount/umount2/pivot_root and the new mount API, setns, unshare/clone with a
// namespace flag, clone3 (ENOSYS, so libc falls back to clone, whose flags a
// filter can see), the TIOCSTI/TIOCLINUX ioctls with any high bits, sockets
// of any family but unix, IPv4, IPv6 and netlink (EAFNOSUPPORT), and every
// syscall of another ABI (ia32 via int 0x80, x32): ENOSYS.
// `ptrace_in_run`: the command gets a Landlock domain, which lets a process
// trace only processes of its own domain (the run's; the seal's init and
// everything outside stay out of reach), so debuggers and tracers of the run's
// own processes work. Without Landlock, ptrace stays refused outright.
// `network`: `host` for a run without a network namespace of its own (a
// weaker seal), which also refuses IPv4 and IPv6 sockets other than TCP (UDP,
// raw, ICMP, SCTP, MPTCP: EACCES), the network around the proxy there.
enum class Network { own_namespace, host };
Result<Program> prepare(bool ptrace_in_run = false, Network network = Network::own_namespace);
// The program as bytes, for the seal's control socket (the supervisor compiles
// it while the seal builds its view, and sends it with its go-ahead), and back.
std::string encode(const Program& program);
Result<Program> decode(std::string_view bytes);
// no_new_privs must be set already. When the kernel refuses a listener (an
// outer sandbox holds one: EBUSY), the same filter is loaded answering EPERM
// itself, and `not_collected` says so.
Result<Loaded> load(Program& program);
// Every "wait for the supervisor" return of `program` becomes EPERM.
void answer_in_kernel(Program& program);
// A second filter refusing ptrace and process_vm_* (EPERM, answered by the
// kernel), for a command that was prepared with `ptrace_in_run` but gets no
// Landlock domain after all (a weaker seal the user accepted). No allocation.
Status refuse_ptrace();
// The seccomp profile for a container or pod Parallex runs in, with the full
// seal (JSON as Docker's and Podman's `--security-opt seccomp=FILE` and a
// Kubernetes `Localhost` profile take it): every call this libseccomp knows
// on x86-64 and arm64 allowed but those the run is refused and the seal
// itself does not make (it makes its namespaces, mounts and pivot_root in
// its own user namespace); anything else EPERM.
std::string container_profile();
// True when the kernel accepts a seccomp filter.
bool available();

}  // namespace px::seal::seccomp
