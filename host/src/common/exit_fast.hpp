#pragma once
// The process's exit, with its address space torn down after the caller has
// the exit status.
//
// An exiting process unmaps its whole address space before its parent can
// reap it: for parallex some 2,600 pages mapped from its executable, its
// libraries and the plugins, 0.6-0.9 ms on a 2-core VM, about a quarter of
// what bwrap takes for a whole run. A child made with CLONE_VM shares that
// address space, so the exit only drops a reference; the child, killed by its
// parent's death (PR_SET_PDEATHSIG), frees it afterwards, on its own time.

namespace px {

// Flushes stdio and exits with `status`; never returns. Where the holder
// cannot be made (another architecture, clone refused), a plain _exit.
[[noreturn]] void exit_fast(int status);

}  // namespace px
