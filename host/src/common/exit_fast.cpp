#include "common/exit_fast.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

namespace px {

namespace {

#if defined(__x86_64__)
// The holder shares every byte of its parent's memory, including the thread
// data libc keeps errno in, while the parent still runs: so it calls no libc
// function at all, only the kernel, and touches nothing but its own stack.
long raw_syscall(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
  return ret;
}

constexpr unsigned long kEverySignal = ~0UL;
alignas(64) unsigned char holder_stack[16 * 1024];

int hold_address_space(void* parent) {
  // No signal but the SIGKILL below reaches it (the terminal's ^C goes to the
  // whole process group); no descriptor is held (a pipe reading the
  // parent's output sees its end when the parent exits).
  raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, reinterpret_cast<long>(&kEverySignal), 0, sizeof kEverySignal);
  raw_syscall(SYS_close_range, 0, static_cast<long>(~0U), 0);
  raw_syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have exited before the death signal was set.
  if (raw_syscall(SYS_getppid) != reinterpret_cast<std::intptr_t>(parent)) raw_syscall(SYS_exit, 0);
  for (;;) raw_syscall(SYS_pause);
}
#endif

}  // namespace

void exit_fast(int status) {
  std::fflush(nullptr);
#if defined(__x86_64__)
  // Made last, from the one thread still running parallex code, right before
  // the exit that kills it.
  (void)::clone(hold_address_space, holder_stack + sizeof holder_stack, CLONE_VM | SIGCHLD,
                reinterpret_cast<void*>(static_cast<std::intptr_t>(::getpid())));
#endif
  ::_exit(status);
}

}  // namespace px
