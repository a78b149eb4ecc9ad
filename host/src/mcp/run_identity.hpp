#pragma once
// Who the server runs as. Inside a Parallex run the supervisor puts the run's
// identity in the environment (PARALLEX_RUN, PARALLEX_RUN_ID, PARALLEX_AGENT,
// PARALLEX_NETWORK, PARALLEX_ALLOWED_HOSTS, PARALLEX_SEALED); the seal itself
// is checked in /proc/self/status (no_new_privs and a seccomp filter), so a
// run that claims to be sealed but is not is reported as such.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcp/jsonrpc.hpp"

namespace px::mcp {

struct SealState {
  bool claimed = false;       // PARALLEX_SEALED=1
  bool no_new_privs = false;  // /proc/self/status NoNewPrivs: 1
  int seccomp = 0;            // /proc/self/status Seccomp: 2 is a filter
  bool verified() const { return no_new_privs && seccomp == 2; }
};

struct RunIdentity {
  bool inside_run = false;
  std::string run_id;
  std::string agent;    // empty for an ad-hoc run
  std::string network;  // offline | allowlist | online (empty outside a run)
  std::vector<std::string> allowed_hosts;
  SealState seal;

  bool agent_run() const { return inside_run && !agent.empty(); }
};

using Getenv = std::function<std::optional<std::string>(const char*)>;
Getenv process_env();

RunIdentity detect_run_identity(const Getenv& env = process_env(),
                                const std::filesystem::path& proc_status = "/proc/self/status");

// Is `host` reachable under the run's rule? online: every host; allowlist: a
// listed host or a subdomain of one ("*.example.com" too); offline: none.
bool network_allows(const RunIdentity& run, const std::string& host);

Json to_json(const RunIdentity& run);

}  // namespace px::mcp
