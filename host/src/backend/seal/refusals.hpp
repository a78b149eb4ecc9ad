#pragma once
// What the seal refused, as the kernel reports it to the supervisor: each
// system call the seccomp filter refuses waits on the filter's listener until
// the supervisor records it and answers EPERM. Landlock's refusals reach only
// the kernel's audit log, read where it is on and readable (audit_log.hpp);
// the record says what was not collected and why.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/refusals.hpp"

namespace px::seal {

using backend::Refusal;
using backend::Refusals;

// A refused call named from its arch, number and first two arguments, as the filter saw it.
std::string describe_refused_call(std::uint32_t arch, int nr, std::uint64_t arg0, std::uint64_t arg1);

namespace audit {
class LandlockLog;
}

// Until `seal_exited` (a pidfd of the seal's outer process) is readable:
// answers and records every notification on `listener` (-1: none), and reads
// `landlock` (nullptr: none) as its records come; LandlockLog::finish adds them.
void serve_refusals(int listener, int seal_exited, audit::LandlockLog* landlock, Refusals& out);

}  // namespace px::seal
