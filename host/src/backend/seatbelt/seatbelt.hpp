#pragma once
// Seatbelt backend: turns a Policy into a macOS sandbox profile (SBPL) for
// /usr/bin/sandbox-exec. Nothing here touches the filesystem or runs a program,
// so a profile can be generated (and tested) on any platform.
//
// Security rules of the generated text:
//  - it starts closed: (version 1)(deny default);
//  - no path of the run, and no other user-supplied text (reasons, origins), is
//    ever written into it: each path is a (param "NAME") bound with -D NAME=path;
//  - the Policy's denies come after every allow they override, because Seatbelt
//    applies the last matching rule.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "policy/policy.hpp"

namespace px::seatbelt {

struct SeatbeltProfile {
  std::string text;                                         // the SBPL, for sandbox-exec -p
  std::vector<std::pair<std::string, std::string>> params;  // NAME, path: for -D NAME=path
  std::map<std::string, std::string> reasons;               // NAME -> why that path is there (for display)
};

// Where sandbox-exec lives on every macOS: called by absolute path so that a
// PATH the run controls cannot substitute another program.
inline constexpr std::string_view kSandboxExec = "/usr/bin/sandbox-exec";

// The base rules (base.sbpl), embedded at build time.
std::string_view base_rules();

// Generates the profile for `policy`. `proxy_port` is the port of the run's
// proxy on localhost, the one way out when the network is not offline; it must
// be non-zero then. Fails (closed) on input the profile cannot carry, such as a
// path holding a NUL byte.
Result<SeatbeltProfile> write_seatbelt_profile(const policy::Policy& policy, std::uint16_t proxy_port);

// The full argv of a sealed run:
//   /usr/bin/sandbox-exec -p TEXT -D NAME=path ... -- command...
std::vector<std::string> sandbox_exec_argv(const SeatbeltProfile& profile,
                                           const std::vector<std::string>& command);

}  // namespace px::seatbelt
