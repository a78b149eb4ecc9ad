#pragma once
// The Backend seam: what enforces a Policy on this platform. Everything above
// it (the run stage, the supervisor, the CLI) reaches enforcement only through
// here; nothing there includes a backend's own files.
//
//   linux     namespaces, mounts, Landlock, seccomp (backend/seal/)
//   none      no seal at all, only when the user chose it (backend/none/)
//   seatbelt  macOS's sandbox-exec; on Linux it can write the profile, not run it
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/refusals.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "policy/policy.hpp"
#include "run/notice.hpp"

namespace px::backend {

namespace fs = std::filesystem;

using EnvMap = std::map<std::string, std::string>;

// One thing the seal promises, enforced on this machine or missing and why.
struct Guarantee {
  std::string id;    // stable key for --json, e.g. "landlock.scopes"
  std::string name;  // what the user gets, in words
  bool enforced = false;
  bool required = false;  // a missing required guarantee makes a run refuse unless a weaker seal is accepted
  std::string detail;     // how it was detected, or why it is missing (with the fix, where there is one)
  std::vector<std::string>
      held_by{};  // for a guarantee several mechanisms hold: the ids of those that do here
};

// One way the run's process limit (policy.hpp: ProcessLimit) is held on this
// machine: `id` for the record and `check --json` ("pids-cgroup-v2",
// "pids-cgroup-v1", "rlimit-nproc", "pid-max"), `description` in words.
struct ProcessLimitMechanism {
  std::string id;
  std::string description;
};

// The run's network, made where the run can reach it (inside its network
// namespace on Linux; on the host's loopback without a seal) and handed to
// the supervisor, which serves it from outside.
struct NetworkHandOff {
  UniqueFd proxy_listener;  // the proxy's listening socket on 127.0.0.1 (port chosen by the kernel)
  std::uint16_t proxy_port = 0;
  // With a network namespace (all empty otherwise): the run's DNS sockets
  // (127.0.0.1:53, [::1]:53), the socket channel over which the seal's init
  // makes listening and connecting sockets inside the run on request
  // (common/socket_request.hpp), and the synthetic ranges routed to lo
  // (198.18.0.0/15 and a unique-local /64).
  std::vector<UniqueFd> dns_udp;
  std::vector<UniqueFd> dns_tcp;
  UniqueFd socket_channel;
  struct SyntheticRanges {
    std::array<std::uint8_t, 4> v4_base{};  // network byte order
    unsigned v4_bits = 15;
    std::optional<std::array<std::uint8_t, 16>> v6_prefix;  // a /64; none when the run has no IPv6
  };
  SyntheticRanges synthetic_ranges;
};

// Called with the run's network; returns the variables that point the
// command at the proxy (HTTP_PROXY with the per-run password...).
using ProxySocketHook = std::function<Result<EnvMap>(NetworkHandOff handoff)>;

// A file the seal shows the command in its view only, bound read-only over
// `view` (the run's CA bundle over the system bundle; a file that holds a
// brokered secret, with the placeholder in its place). Without a private
// view (a weaker seal) it cannot be put in place: the seal says so, naming
// `secret_of` when the file stands in for one that holds a secret.
struct ViewFile {
  fs::path view;
  std::string content;
  std::string secret_of;  // the credential whose secret the host's file holds, or empty
};

// A harness's file or folder in the user's home that the run may write but
// whose changes must not reach the home unseen (policy::HomeFile::guarded):
// the seal shows the run a layer of its own there (protect/home_settings.hpp).
struct HomeLayer {
  enum class Kind {
    copy,      // a file: `source` (the run's copy of the user's file) bound writable
    overlay,   // a folder: the user's folder beneath `upper` (and its `work` dir)
    read_only  // no layer could be made: the user's file or folder, read-only
  } kind = Kind::copy;
  fs::path view;  // the path in the user's home, as the run sees it
  fs::path source, upper, work;
  // An overlay on a scratch folder: where it cannot be mounted, the run gets
  // its upper dir alone (an empty folder of its own) rather than read-only.
  bool scratch = false;
};

struct LaunchRequest {
  const policy::Policy* policy = nullptr;  // required; outlives the launch
  fs::path executable;                     // absolute
  std::vector<std::string> argv;           // argv[0] as the user typed it
  EnvMap env;                              // the final environment, less what the proxy hook adds
  fs::path cwd;
  fs::path state_dir;                // the run's private state on the host, never in its view
  bool allow_weaker_seal = false;    // run with what the kernel allows when a guarantee is missing
  ProxySocketHook on_proxy_socket;   // empty: the run is offline
  std::vector<ViewFile> view_files;  // the run's broker: its CA bundle, masked secret files
  int cgroup_fd = -1;                // the run's cgroup (O_DIRECTORY), or -1
  // The harness's guarded files in the user's home (HomeLayer), and where what
  // the run made at such a path inside a state folder that did not exist
  // before it is moved instead of being kept (mirrored by absolute path).
  std::vector<HomeLayer> home_layers;
  fs::path home_held_dir;
  // The run folder's .git folder as the supervisor found it when the run
  // started, opened once then (O_PATH, beneath the run folder, never through
  // a link), or -1 when it had none: the seal protects that very folder or
  // refuses to start. `run_git_looked` false: the seal opens it itself, once.
  bool run_git_looked = false;
  int run_git_fd = -1;
  // The process limit (the policy's process_limit()): what the supervisor
  // put in place already (the run's pids cgroup); a seal adds its own
  // mechanisms, and fails closed (unless allow_weaker_seal) when nothing at
  // all holds it. `pids_cgroup_fd` (O_DIRECTORY), when >= 0: a cgroup of the
  // v1 pids hierarchy the seal's first process enters before anything else
  // (v1 has no CLONE_INTO_CGROUP).
  std::vector<ProcessLimitMechanism> process_limit_held_by;
  int pids_cgroup_fd = -1;
  // The command's first process exists (`enters_cgroup`: it placed itself in
  // the cgroup before it could start anything) and builds the seal; the
  // command does not start before this returns. The supervisor finishes its
  // own set-up here, in parallel with the seal's. An error ends the run
  // before its command starts.
  std::function<Status(pid_t pid, bool enters_cgroup)> on_started;
  // The command's own status is known while the seal is still being torn
  // down: what only a live run needs can go meanwhile.
  std::function<void()> on_command_ended;
};

struct LaunchResult {
  int exit_code = 0;               // the command's exit code, or 128+N (then `signal` is N)
  int signal = 0;                  // the signal that ended the command, when it died of one
  std::string message;             // why the command could not run (exit 126/127), else empty
  std::vector<run::Notice> notes;  // what the backend left out, kept or could not enforce
  bool weakened = false;           // a required guarantee was missing at launch (the user accepted it)
  Refusals refusals;               // what the seal refused, where the platform tells
  // What holds the run's process limit: the request's held_by and the
  // backend's own mechanisms that were set; empty when none (a weaker seal).
  std::vector<ProcessLimitMechanism> process_limit;
};

// Where the backend runs, as far as the seal is concerned (the machine
// itself, a container, WSL 2...), and what that costs the seal.
struct Environment {
  std::string kind = "host";  // "host", "container", "wsl1", "wsl2"
  std::string name = "this machine";
  std::vector<std::string> costs;  // what the environment takes from the seal, one line each
  bool supported = true;           // false where no seal can be built at all (WSL 1)
};

// A seal that is a text the platform runs (Seatbelt's profile), written out
// instead of run: `parallex policy show --format sbpl|sbpl-args`.
struct WrittenSeal {
  std::string profile;                                      // the profile's text
  std::vector<std::pair<std::string, std::string>> params;  // its parameters: NAME, value
  std::vector<std::string> argv;                            // the command line that runs the command under it
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // What this backend guarantees on this machine. `Probe::thorough` tries
  // each kernel feature for real (`parallex check`); `Probe::quick` reads only
  // what costs nothing (a run's start): what it cannot see without trying
  // (the namespaces) fails the launch itself, closed, naming the guarantee.
  enum class Probe { quick, thorough };
  virtual std::vector<Guarantee> guarantees(Probe probe = Probe::thorough) const = 0;
  // The mechanisms by which this backend itself holds a run's process limit
  // on this machine (the supervisor's pids cgroup comes on top); nullopt for
  // a backend that has no process limit to hold (no seal; Seatbelt).
  virtual std::optional<std::vector<ProcessLimitMechanism>> process_limit_mechanisms(Probe /*probe*/) const {
    return std::nullopt;
  }
  // What a run records of the seal's refusals here (not part of the seal's
  // strength, so never a reason to call it weaker): `enforced` means recorded.
  virtual std::vector<Guarantee> refusal_recording() const { return {}; }
  // The platform in a few words ("Linux 6.1.0, Landlock ABI 7").
  virtual std::string platform() const = 0;
  // What this build of the backend can use at most, whatever the machine
  // offers: a line for `--version` ("Landlock ABI 7 ..."), or empty.
  virtual std::string build_features() const { return {}; }
  // Where this runs; `found` is what guarantees() returned (the environment
  // is judged partly by what failed there).
  virtual Environment environment(const std::vector<Guarantee>& /*found*/) const { return {}; }
  // A profile the host's security module must hold before this executable
  // may build the seal (Ubuntu's AppArmor restriction of user namespaces);
  // empty where none is needed.
  virtual std::string security_module_profile() const { return {}; }
  // The seccomp profile a container or pod must run Parallex under for the
  // full seal (the runtime's default forbids new namespaces); empty where
  // the platform has no such thing.
  virtual std::string container_seccomp_profile() const { return {}; }
  // The seal for `policy` as the text the platform would run `command` under.
  // Unsupported where the seal is not a text (Linux's is system calls the
  // supervisor makes).
  virtual Result<WrittenSeal> write_seal(const policy::Policy& /*policy*/, std::uint16_t /*proxy_port*/,
                                         const std::vector<std::string>& /*command*/) const {
    return Error::unsupported(std::string("the ") + name() +
                              " backend's seal is not a text it can write out");
  }
  // Starts the command and waits for it. A set-up failure is an Error; the
  // command's own failure is an exit code.
  virtual Result<LaunchResult> launch(const LaunchRequest& request) = 0;
};

// Test-only: PARALLEX_TEST_PROCESS_LIMIT_WITHOUT=pids-cgroup,pid-max,rlimit-nproc
// reads those mechanisms of the process limit as missing on this machine
// ("pids-cgroup": no pids controller the supervisor may write, v1 or v2).
// It can only take mechanisms away: with none left the guarantee is missing,
// and a run refuses (or runs weaker with --allow-weaker-seal).
bool process_limit_hidden_for_tests(std::string_view id);

// The backend that seals runs on this platform: linux_backend() here.
Backend& sealing_backend();
// The Linux seal (backend/seal/).
Backend& linux_backend();
// No seal: a plain child with the policy's environment, only for runs whose
// user chose to go unsealed (backend/none/).
Backend& none_backend();
// macOS's Seatbelt (backend/seatbelt/). On Linux its guarantees are all
// missing and launch refuses: it can only write the profile.
Backend& seatbelt_backend();

}  // namespace px::backend
