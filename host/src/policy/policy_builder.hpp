#pragma once
// PolicyBuilder: the only way to make a Policy. Its methods never throw and
// return *this; the first error is kept and returned by build(), with a
// message that names the input and the fix. build() also applies the rules a
// plugin cannot break: it may not open all of $HOME, un-deny a secret path, or
// write outside the run's home and temp dir.
#include <chrono>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "policy/policy.hpp"

namespace px::policy {

class PolicyBuilder {
 public:
  PolicyBuilder& run_folder(const fs::path& path);
  PolicyBuilder& run_home(const fs::path& path);
  PolicyBuilder& user_home(const fs::path& path);
  PolicyBuilder& temp_dir(const fs::path& path);
  PolicyBuilder& harness(std::string name);
  // Where the policy is enforced (what a plugin may ask for differs a little).
  PolicyBuilder& platform(Platform platform);

  PolicyBuilder& allow(const fs::path& path, Access access, std::string reason, Origin origin);
  // A writable state dir created before the run when missing.
  PolicyBuilder& allow_state_dir(const fs::path& path, std::string reason, Origin origin);
  // A writable state file, made for the run when missing (plugin ABI 1.5).
  PolicyBuilder& allow_state_file(const fs::path& path, std::string reason, Origin origin);
  PolicyBuilder& deny(const fs::path& path, std::string reason, Origin origin);
  PolicyBuilder& read_only(const fs::path& path, std::string reason, Origin origin);
  // `dir`'s entries are fixed (FixedFolder); `open` are those that keep their access.
  PolicyBuilder& fixed_entries(const fs::path& dir, std::vector<fs::path> open, std::string reason,
                               Origin origin);
  PolicyBuilder& forbid_new_git(bool forbid, Origin origin);
  // The most processes a run may have at once (policy.hpp: ProcessLimit); a
  // later layer replaces an earlier one's. Out of range: an error naming `origin`.
  PolicyBuilder& process_limit(std::uint64_t max, Origin origin);
  // `lower` (a cache of the user's) shown read-only beneath `view`, a folder
  // of the run's temp dir as the run sees it (policy.hpp: CacheLayer).
  PolicyBuilder& cache_layer(const fs::path& lower, const fs::path& view, std::string reason, Origin origin);

  PolicyBuilder& network(NetworkMode mode, Origin origin);
  PolicyBuilder& allow_host(const std::string& pattern, Origin origin);
  PolicyBuilder& allow_port(int port, Origin origin);
  // `ports` empty: every port of this machine's loopback.
  PolicyBuilder& local_servers(bool on, Origin origin, std::vector<std::uint16_t> ports = {});
  // Ask mode for `timeout` (zero: off).
  PolicyBuilder& ask(std::chrono::seconds timeout, Origin origin);
  // "PORT[:HOSTPORT]": the run's server on PORT, on this machine's 127.0.0.1:HOSTPORT (default PORT).
  PolicyBuilder& publish(const std::string& spec, Origin origin);
  // The network mode set so far (compose reads it to give a flag its meaning).
  NetworkMode network_mode() const;

  PolicyBuilder& keep_env(std::string pattern, std::string reason, Origin origin);
  PolicyBuilder& strip_env(std::string pattern, std::string reason, Origin origin);
  PolicyBuilder& set_env(std::string name, std::string value, std::string reason, Origin origin,
                         bool secret = false);
  // A host variable passed on purpose by its exact name: it beats strip.
  PolicyBuilder& pass_env(std::string name, std::string reason, Origin origin);
  // The explicit opt-out (`dangerously_writable`, `--dangerously-writable`):
  // the read-only paths at or under `path` become writable again, and the
  // policy says so as a weakening.
  PolicyBuilder& dangerously_writable(const fs::path& path, Origin origin);

  PolicyBuilder& nested_sandbox(NestedSandboxSwitch entry);
  PolicyBuilder& suggested_host(std::string host, std::string reason, Origin origin);
  // The run's credential broker (policy_builder_broker.cpp). A host's request
  // rules, or its passthrough switch, replace what an earlier layer gave it;
  // a credential replaces an earlier one of its name; drop_credential turns
  // one off (`NAME: off` in YAML).
  PolicyBuilder& request_rules(const std::string& host, std::vector<broker::RequestRule> rules,
                               Origin origin);
  PolicyBuilder& passthrough(const std::string& host, Origin origin);
  PolicyBuilder& credential(BrokeredCredential credential);
  PolicyBuilder& drop_credential(const std::string& name, Origin origin);
  // Changes the `fields` (hosts, env, headers, shape, expires) of the
  // credential of `changes.spec.name` an earlier layer made, keeping its
  // secret's source; an error when there is none.
  PolicyBuilder& amend_credential(const BrokeredCredential& changes, const std::set<std::string>& fields);

  // A harness's file in the user's home (home_files.hpp), absolute.
  PolicyBuilder& home_file(HomeFile file);

  // An explicit user choice that weakens the seal (dangerously_* in YAML).
  PolicyBuilder& weakening(std::string description);
  // Allows a grant of the whole home: only a dangerously_* choice calls this.
  PolicyBuilder& allow_whole_home(bool allowed);

  // Records an error from outside (a profile, a plugin); the first one wins.
  PolicyBuilder& fail(Error error);
  bool ok() const { return !error_.has_value(); }

  Result<Policy> build();

 private:
  std::optional<fs::path> absolute(const fs::path& path, const Origin& origin, const char* what);
  Status check_plugin_grant(const PathGrant& grant) const;
  // What only the whole set can tell: a credential bound to a passthrough
  // host, a variable two credentials claim.
  Status check_brokered() const;

  Policy policy_;
  struct Unprotected {
    fs::path path;
    Origin origin;
  };
  std::vector<Unprotected> unprotected_;  // applied by build(), after every read-only path is known
  bool have_run_folder_ = false;
  Platform platform_ = Platform::linux_host;
  bool allow_whole_home_ = false;
  std::optional<Error> error_;
};

}  // namespace px::policy
