#pragma once
// Landlock: the filesystem allowlist, TCP bind/connect limits and the signal /
// abstract-unix-socket scopes, through raw syscalls so that an old
// <linux/landlock.h> does not limit what a newer kernel can enforce. The
// ruleset is built inside the final view (paths as the command sees them) and
// applied by the command's process just before seccomp and execve.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "run/notice.hpp"

namespace px::seal::landlock {

namespace fs = std::filesystem;

// The highest ABI this code knows the rights of (landlock.cpp): a newer kernel
// is used at this ABI. `parallex --version` names it.
constexpr int kHighestAbi = 7;

// The ABI the running kernel offers (0: Landlock unavailable), and its errata.
int abi_version();

// Access kinds the backend grants; each maps to the rights of the running ABI.
enum class Grant {
  read,    // read files, list dirs, execute
  write,   // everything but making device nodes
  list,    // list the directory only (the view's root)
  device,  // read, write and ioctl a device node or its dir (/dev/tty, /dev/pts)
};

struct PathRule {
  fs::path path;
  Grant grant = Grant::read;
};

struct Plan {
  std::vector<PathRule> paths;
  // TCP: nullopt leaves TCP unrestricted (the run's own network namespace, or
  // Local servers); otherwise bind is refused and connect is allowed only to
  // these ports (the proxy's).
  std::optional<std::vector<std::uint16_t>> tcp_connect_ports;
  bool scope_signals = true;
  bool scope_abstract_unix = true;
};

struct Ruleset {
  UniqueFd fd;
  int abi = 0;
  std::vector<run::Notice> notes;  // rules skipped (missing path, symlink), rights the ABI lacks
};

// Opens every path of `plan` (never following a symlink in it) and adds its rule.
Result<Ruleset> prepare(const Plan& plan);
// no_new_privs must be set already. Enables audit logging of the command's denials on ABI >= 7.
Status restrict_self(Ruleset& ruleset);

// Feature probes for `parallex check`: true when the kernel accepts a ruleset using them.
bool supports_scopes();
bool supports_tcp();

}  // namespace px::seal::landlock
