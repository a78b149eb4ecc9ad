#pragma once
// Small helpers shared by the facility files: errors that name the call, its
// arguments and errno (nsjail's habit), and raw syscalls glibc lacks.
#include <linux/openat2.h>

#include <string>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::seal {

// "mount tmpfs on /tmp: Operation not permitted (EPERM)" from the current errno.
Error sys_error(const std::string& what);
Error sys_error(const std::string& what, int err);
// The symbolic name of an errno value ("EPERM"), for messages and probes.
const char* errno_name(int err);

int sys_openat2(int dirfd, const char* path, const open_how& how);

// Writes all of `text` to `path` (for /proc/self/uid_map and friends).
Status write_file(const char* path, const std::string& text);

}  // namespace px::seal
