#pragma once
// Policy: the one platform-neutral description of what a run may do. It is
// built once through PolicyBuilder (policy_builder.hpp), which validates it;
// nothing changes it afterwards, and every backend (Linux, Seatbelt) enforces
// exactly this object. Every allowed thing carries its Origin so that
// `parallex policy show` can say why a path is open.
//
// Precedence, everywhere: a deny beats an allow, whatever their origins. A
// read-only path beats a writable root around it.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/brokered.hpp"
#include "policy/environment.hpp"
#include "policy/home_files.hpp"
#include "policy/origin.hpp"

namespace px::policy {

namespace fs = std::filesystem;

enum class Access { read, write };  // write implies read

// Where the run's policy is enforced: the Linux seal, or a Seatbelt profile.
enum class Platform { linux_host, macos };

struct PathGrant {
  fs::path path;
  Access access = Access::read;
  std::string reason;
  Origin origin;
  // A harness state dir: the supervisor creates it (0700) before the run when
  // missing, since a grant cannot cover a path that does not exist yet.
  bool create_if_missing = false;
  // With create_if_missing: a state file (0600), not a folder (ABI 1.5).
  bool state_file = false;
};

struct PathDeny {
  fs::path path;
  std::string reason;
  Origin origin;
};

// A path inside a writable root that stays read-only (.git/hooks, .git/config,
// shell rc files in an agent's home).
struct ReadOnlyPath {
  fs::path path;
  std::string reason;
  Origin origin;
};

// A folder whose entries are fixed for the run: nothing can be added to it,
// removed from it or renamed in it, though a writable grant covers it; the
// entries in `open` (on the way to a path the run keeps) keep their own
// access beneath. Parallex's own state where a kept path lies inside it: a
// new `plugins/` or profile there would be read by the next `parallex`.
struct FixedFolder {
  fs::path path;
  std::vector<fs::path> open;  // absolute paths of its entries that stay as the grants make them
  std::string reason;
  Origin origin;
};

enum class NetworkMode { offline, allowlist, online };
const char* to_string(NetworkMode mode);

struct HostRule {
  std::string pattern;  // "github.com" (itself and subdomains) or "*.github.com" (subdomains only)
  std::optional<std::uint16_t> port;  // "github.com:22": that port only; none: the rule's `ports`
  Origin origin;
  std::string text() const { return port ? pattern + ":" + std::to_string(*port) : pattern; }
  // The ports this rule opens, given the network's default ports.
  bool allows_port(std::uint16_t p, const std::vector<std::uint16_t>& default_ports) const;
};

// A server the run starts inside on `inside`, reachable from this machine's
// loopback on `host` (--publish PORT[:HOSTPORT]).
struct PublishedPort {
  std::uint16_t inside = 0;
  std::uint16_t host = 0;
  Origin origin;
};

struct NetworkRule {
  NetworkMode mode = NetworkMode::offline;
  Origin mode_origin;
  std::vector<HostRule> hosts;
  std::vector<std::uint16_t> ports{80, 443};
  bool local_servers = false;
  Origin local_servers_origin;
  // With Local servers: the only ports it opens (`--local-servers=3000,5432`),
  // sorted; empty: every port (the bare switch, an explicit choice).
  std::vector<std::uint16_t> local_server_ports;
  // Local servers is on for `port` (this machine's loopback, a private address).
  bool local_port_allowed(std::uint16_t port) const;
  std::vector<PublishedPort> published;
  // Ask mode (policy/ask.hpp): how long a connection outside the rule is held
  // while the user is asked; zero: refused at once.
  std::chrono::seconds ask{0};
  Origin ask_origin;
  // Every port some rule opens (`ports` and each host rule's own port), sorted.
  std::vector<std::uint16_t> reachable_ports() const;
};

// What turns off a harness's own sandbox inside ours (plugin contribution).
struct NestedSandboxSwitch {
  enum class Kind { env, arg } kind = Kind::env;
  std::string name;   // env variable name (kind env)
  std::string value;  // env value, or the argument (kind arg)
  std::string reason;
  Origin origin;
};

struct SuggestedHost {
  std::string host;
  std::string reason;
  Origin origin;
};

// One of the user's own caches shown read-only beneath a folder of the run's
// temp dir (`tool_caches: overlay`): the run reads what is cached and writes
// into a layer of its own, which goes with the run. The user's cache is never
// written, so nothing a run plants reaches the user's builds.
struct CacheLayer {
  fs::path lower;  // the user's cache on the host
  fs::path view;   // the run's folder for that tool, as the run sees it (/tmp/tool-caches/npm)
  std::string reason;
  Origin origin;
};

// The most processes (threads included: each is a task of the kernel's) a
// run may have at once: a fork bomb stops there (fork fails with EAGAIN), a
// parallel build never gets near. Every seal holds it (docs/linux-seal.md,
// "The process limit"); `parallex check` says by what.
struct ProcessLimit {
  static constexpr std::uint64_t kDefault = 4096;
  static constexpr std::uint64_t kMin = 32;         // the seal's own processes and a shell need a few
  static constexpr std::uint64_t kMax = 4'000'000;  // below the kernel's PID_MAX_LIMIT (4194304) with room
  std::uint64_t max = kDefault;
  Origin origin = Origin::builtin("every run's default");
};

// "" when `max` is a valid process limit, else why not (with the range and the default).
std::string check_process_limit(std::uint64_t max);

// A decision of the Policy's own oracle, with the rule that made it.
struct Decision {
  bool allowed = false;
  std::string rule;  // e.g. "deny ~/.ssh (profile default.yaml:40: SSH keys)"
};

class PolicyBuilder;

class Policy {
 public:
  // The folder the run works in: readable and writable.
  const fs::path& run_folder() const { return run_folder_; }
  // $HOME inside the run (an agent's home, or the user's home for ad-hoc runs).
  const fs::path& run_home() const { return run_home_; }
  // The user's real home (secret paths are denied under it too).
  const fs::path& user_home() const { return user_home_; }
  // The run's private temp dir on the host (Linux mounts it at /tmp and /var/tmp).
  const fs::path& temp_dir() const { return temp_dir_; }
  const std::string& harness() const { return harness_; }

  const std::vector<PathGrant>& grants() const { return grants_; }
  const std::vector<PathDeny>& denies() const { return denies_; }
  const std::vector<ReadOnlyPath>& read_only() const { return read_only_; }
  const std::vector<FixedFolder>& fixed_folders() const { return fixed_folders_; }
  // Caches shown beneath the run's own (Linux only); one whose cache a deny
  // covers is left out when the policy is built (a deny beats everything).
  const std::vector<CacheLayer>& cache_layers() const { return cache_layers_; }
  // Files other programs run or trust later (an editor's tasks, a harness's
  // hooks and MCP servers, direnv's .envrc): the read-only paths inside the
  // run folder, outside any git dir (whose files are checked by what they say).
  // Made during a run, they are moved aside (protect/quarantine.hpp).
  std::vector<const ReadOnlyPath*> project_files() const;
  // No new `.git` may be made inside the run folder (git init, gitfile).
  bool forbid_new_git() const { return forbid_new_git_; }
  const Origin& forbid_new_git_origin() const { return forbid_new_git_origin_; }
  const ProcessLimit& process_limit() const { return process_limit_; }
  const NetworkRule& network() const { return network_; }
  const EnvironmentRules& environment() const { return environment_; }
  const std::vector<NestedSandboxSwitch>& nested_sandbox() const { return nested_; }
  const std::vector<SuggestedHost>& suggested_hosts() const { return suggested_hosts_; }
  // The run's credential broker (brokered.hpp): request rules per host,
  // passthrough hosts, brokered credentials.
  const std::vector<HostRequestRules>& request_rules() const { return request_rules_; }
  const std::vector<BrokeredCredential>& credentials() const { return credentials_; }
  // The harness's files in the user's own home (home_files.hpp), in a run
  // there: the run sees its writes to those it may write; what is data lands
  // in the home, a changed setting is held back (protect/home_settings.hpp).
  // Empty in an agent's run (its home is its own).
  const std::vector<HomeFile>& home_files() const { return home_files_; }
  // Weakening options the user chose explicitly (dangerously_* in YAML), for display.
  const std::vector<std::string>& weakenings() const { return weakenings_; }

  // The Policy's own oracle: the reference every backend is checked against.
  Decision explain_read(const fs::path& path) const;
  Decision explain_write(const fs::path& path) const;
  Decision explain_connect(std::string_view host, std::uint16_t port) const;
  bool may_read(const fs::path& path) const { return explain_read(path).allowed; }
  bool may_write(const fs::path& path) const { return explain_write(path).allowed; }
  bool may_connect(std::string_view host, std::uint16_t port) const {
    return explain_connect(host, port).allowed;
  }
  // Creating a directory named `.git` at `path` (git init).
  Decision explain_create_git(const fs::path& path) const;

  // A stable SHA-256 of the policy's content (not its origins), for run records.
  std::string digest() const;

 private:
  friend class PolicyBuilder;
  Policy() = default;

  const PathDeny* deny_covering(const fs::path& path) const;

  fs::path run_folder_;
  fs::path run_home_;
  fs::path user_home_;
  fs::path temp_dir_;
  std::string harness_;
  std::vector<PathGrant> grants_;
  std::vector<PathDeny> denies_;
  std::vector<ReadOnlyPath> read_only_;
  std::vector<FixedFolder> fixed_folders_;
  std::vector<CacheLayer> cache_layers_;
  bool forbid_new_git_ = true;
  Origin forbid_new_git_origin_;
  ProcessLimit process_limit_;
  NetworkRule network_;
  EnvironmentRules environment_;
  std::vector<NestedSandboxSwitch> nested_;
  std::vector<SuggestedHost> suggested_hosts_;
  std::vector<HostRequestRules> request_rules_;
  std::vector<BrokeredCredential> credentials_;
  std::vector<HomeFile> home_files_;
  std::vector<std::string> weakenings_;
};

// Host rule syntax for allowlists (common/host_rule.hpp: a plain DNS name, an
// optional leading "*." for subdomains only, an optional ":PORT"; no public
// suffix). Returns an error message, or empty.
std::string check_host_pattern(std::string_view pattern);
// Lowercases and drops one trailing dot.
std::string normalize_host(std::string_view host);
// `host` (normalized) matches `pattern` on label boundaries.
bool host_matches(std::string_view host, std::string_view pattern);

}  // namespace px::policy
