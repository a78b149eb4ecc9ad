#pragma once
// Starting a helper program from the host: a credential's secret command,
// ssh-keygen, a harness's own command line, a browser. One way to do it, so
// each caller gets the same care: no shell; argv[0] a path, or a name looked
// up in PATH; stdin from a file (/dev/null unless said), never the user's
// terminal; SIGPIPE at its default (the host may ignore it, and a helper that
// inherits that writes on to a closed pipe for ever); its own process group
// where asked, so that ending it ends what it started too.
//
// Not for the sealed run itself: that is the seal's own fork (backend/seal).
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px {

struct SpawnSpec {
  std::vector<std::string> argv = {};
  // "NAME=value" each; nullopt: this process's environment.
  std::optional<std::vector<std::string>> env = std::nullopt;
  std::filesystem::path stdin_file = "/dev/null";
  bool own_process_group = false;
};

// Starts `spec` with its stdout and stderr on the given descriptors (-1:
// /dev/null) and returns at once; the caller waits (wait_exit_status). An
// error names the program and says why it could not be started.
Result<pid_t> spawn_process(const SpawnSpec& spec, int stdout_fd = -1, int stderr_fd = -1);

// Waits for `pid` to end: its exit status, or 128 + N for signal N.
int wait_exit_status(pid_t pid);

struct CaptureLimits {
  std::chrono::milliseconds timeout{0};  // 0: as long as it runs
  std::size_t max_bytes = 64 * 1024;     // on each stream; past it the program is killed
  bool merge_stderr = false;             // stderr into `out`
  // Once it has ended, what is left of its process group is killed too (a
  // browser's helpers, which outlive it and keep writing to its profile).
  // Only with SpawnSpec::own_process_group.
  bool end_group_after = false;
};

struct Captured {
  int exit_status = -1;  // 128 + N for signal N (SIGKILL when it was ended below)
  bool timed_out = false;
  bool too_big = false;  // printed more than max_bytes: killed, what came before kept
  std::string out;
  std::string err;
  pid_t pid = 0;  // the process it was (ended and reaped by now)
};

// Runs `spec` to its end (or its limit) and keeps what it prints. A program
// that outlives a limit is killed with SIGKILL (its process group when it has
// one of its own). An error only when it cannot be started: what it did is
// for the caller to judge from `Captured`.
//
// The buffers are reserved for `max_bytes` up front (up to 1 MiB), so a
// secret a command prints is never copied into memory freed behind the
// caller's back: a caller that wipes `out` wipes every copy.
Result<Captured> spawn_capture(const SpawnSpec& spec, const CaptureLimits& limits = {});

}  // namespace px
