#include "backend/seatbelt/seatbelt.hpp"

#include <algorithm>
#include <set>

#include "common/paths.hpp"

namespace px::seatbelt {

namespace {

using policy::Access;
using policy::NetworkMode;
using policy::Policy;

// /etc, /tmp and /var are symbolic links to /private/... on macOS, and Seatbelt
// matches the resolved path, so a rule for /etc/hosts must also name
// /private/etc/hosts. This is a fixed property of the platform, decided without
// touching the filesystem (the profile may be generated on another machine).
std::vector<fs::path> spellings(const fs::path& path) {
  std::vector<fs::path> out{path};
  for (const char* link : {"/etc", "/tmp", "/var"}) {
    if (is_within(path, link)) out.push_back(fs::path("/private") / path.relative_path());
  }
  return out;
}

// Interns paths as -D parameters. A path always gets the same name; names are
// derived from the path's role and order in the Policy, never from its text.
class Params {
 public:
  explicit Params(const Policy& p) : policy_(p) {}

  // The filter(s) matching `path` and everything under it (subpath), or only
  // `path` itself (literal), in every spelling macOS may resolve it to.
  std::string filters(const fs::path& path, const char* prefix, const char* kind, const std::string& reason) {
    std::string out;
    const auto all = spellings(path);
    const std::string base = name(all.front(), prefix, "", reason);
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::string n = i == 0 ? base : name(all[i], prefix, base, reason);
      out += std::string(out.empty() ? "" : " ") + "(" + kind + " (param \"" + n + "\"))";
    }
    return out;
  }

  bool has_alias(const fs::path& path) const { return spellings(path).size() > 1; }

  const std::vector<std::pair<std::string, std::string>>& bound() const { return bound_; }
  const std::map<std::string, std::string>& reasons() const { return reasons_; }

 private:
  std::string name(const fs::path& path, const char* prefix, const std::string& alias_of,
                   const std::string& reason) {
    const std::string key = path.string();
    if (auto it = by_path_.find(key); it != by_path_.end()) return it->second;
    std::string n;
    if (!alias_of.empty())
      n = alias_of + "_PRIVATE";
    else if (path == policy_.run_folder())
      n = "RUN_FOLDER";
    else if (path == policy_.user_home())
      n = "USER_HOME";
    else if (path == policy_.run_home())
      n = "RUN_HOME";
    else if (path == policy_.temp_dir())
      n = "TEMP_DIR";
    else
      n = std::string(prefix) + "_" + std::to_string(counters_[prefix]++);
    by_path_.emplace(key, n);
    bound_.emplace_back(n, key);
    reasons_.emplace(n, reason);
    return n;
  }

  const Policy& policy_;
  std::map<std::string, std::string> by_path_;
  std::map<std::string, int> counters_;
  std::vector<std::pair<std::string, std::string>> bound_;
  std::map<std::string, std::string> reasons_;
};

// A rule with one filter per line, so golden files diff line by line.
std::string rule(const std::string& head, const std::vector<std::string>& filters) {
  if (filters.size() == 1) return "(" + head + " " + filters.front() + ")\n";
  std::string out = "(" + head;
  for (const auto& f : filters) out += "\n  " + f;
  return out + ")\n";
}

std::string describe(const std::string& reason, const policy::Origin& origin) {
  return reason.empty() ? origin.describe() : reason + " (" + origin.describe() + ")";
}

// Proper ancestors of `path`, outermost first, without "/" (base.sbpl has it).
std::vector<fs::path> ancestors(const fs::path& path) {
  std::vector<fs::path> out;
  for (fs::path p = path.parent_path(); p != p.root_path() && !p.empty(); p = p.parent_path())
    out.push_back(p);
  std::reverse(out.begin(), out.end());
  return out;
}

Status check_path(const fs::path& path) {
  if (path.native().find('\0') != std::string::npos)
    return Error::invalid(
        "the path '" + path.string() +
        "' holds a NUL byte, which a sandbox-exec parameter cannot carry; remove it from the policy");
  if (!path.is_absolute())
    return Error::internal("the Seatbelt writer got the relative path '" + path.string() + "'");
  return px::ok();
}

}  // namespace

Result<SeatbeltProfile> write_seatbelt_profile(const Policy& policy, std::uint16_t proxy_port) {
  for (const auto& g : policy.grants()) PX_TRY(check_path(g.path));
  for (const auto& d : policy.denies()) PX_TRY(check_path(d.path));
  for (const auto& r : policy.read_only()) PX_TRY(check_path(r.path));
  PX_TRY(check_path(policy.run_folder()));
  const NetworkMode mode = policy.network().mode;
  if (mode != NetworkMode::offline && proxy_port == 0)
    return Error::internal("the Seatbelt profile needs the run's proxy port when the network is " +
                           std::string(policy::to_string(mode)) +
                           "; refusing to write a profile without one");

  Params params(policy);
  std::string t;
  t += "(version 1)\n";
  t += "; Generated by parallex from the run's Policy. Every path is a parameter bound\n";
  t += "; with sandbox-exec -D NAME=path; no path is written into this text.\n";
  t += "; Seatbelt applies the last rule that matches, so denies follow the allows\n";
  t += "; they override.\n";
  t += "(deny default)\n\n";
  t += "; ===== base rules (base.sbpl) =====\n";
  t += base_rules();
  if (!t.ends_with('\n')) t += '\n';

  t += "\n; ===== the run's Policy =====\n";
  t += "\n; --- readable paths: every grant (a writable path is readable too) ---\n";
  for (const auto& g : policy.grants())
    t += "(allow file-read* " + params.filters(g.path, "GRANT", "subpath", describe(g.reason, g.origin)) +
         ")\n";

  t += "\n; --- writable paths ---\n";
  for (const auto& g : policy.grants()) {
    if (g.access != Access::write) continue;
    t += "(allow file-write* " + params.filters(g.path, "GRANT", "subpath", describe(g.reason, g.origin)) +
         ")\n";
  }

  // realpath(), getcwd() and path walks stat each directory above a granted
  // path; allow that stat (not a listing, not reading files) on exactly those.
  std::vector<std::string> traverse;
  std::set<std::string> seen;
  for (const auto& g : policy.grants()) {
    for (const auto& a : ancestors(g.path)) {  // filters() adds the /private spelling
      if (!seen.insert(a.string()).second) continue;
      traverse.push_back(params.filters(a, "PARENT", "literal", "a folder above a granted path (stat only)"));
    }
  }
  if (!traverse.empty()) {
    t += "\n; --- folders above granted paths: metadata only, so path walks work ---\n";
    t += rule("allow file-read-metadata", traverse);
  }

  t += "\n; ----- denies: after every allow above, so they win -----\n";
  t += "\n; --- denied paths (secrets): no read, no write, no hard link ---\n";
  for (const auto& d : policy.denies())
    t += "(deny file-read* file-write* file-link " +
         params.filters(d.path, "DENY", "subpath", describe(d.reason, d.origin)) + ")\n";

  t += "\n; --- read-only paths inside writable ones ---\n";
  for (const auto& r : policy.read_only())
    t += "(deny file-write* file-link " +
         params.filters(r.path, "READONLY", "subpath", describe(r.reason, r.origin)) + ")\n";

  // Parallex's own state holding a path the run keeps: nothing new in it
  // outside its open entries (a plugin or profile the next `parallex` reads).
  if (!policy.fixed_folders().empty())
    t += "\n; --- folders of fixed entries: nothing is made there but beneath their open entries ---\n";
  for (const auto& f : policy.fixed_folders()) {
    const auto any = [&](const fs::path& p, const std::string& what) {
      const std::string filter = params.filters(p, "FIXED", "subpath", what);
      return params.has_alias(p) ? "(require-any " + filter + ")" : filter;
    };
    std::string open;
    for (const auto& e : f.open) open += "\n      " + any(e, "an entry kept as the grants make it");
    t += "(deny file-write-create\n  (require-all\n    " + any(f.path, describe(f.reason, f.origin)) +
         (open.empty() ? "" : "\n    (require-not (require-any" + open + "))") + "))\n";
  }

  // Seatbelt checks a rename against the path renamed, not the paths under it:
  // without this, moving `.git` (or an agent home's `.config/gh`) away and back
  // would step around a deny below it. Folders above a denied or read-only path
  // inside a writable root can therefore not be renamed or removed.
  std::vector<std::string> pins;
  std::set<std::string> pinned;
  auto pin_above = [&](const fs::path& protected_path) {
    for (const auto& a : ancestors(protected_path)) {
      const bool in_writable =
          std::any_of(policy.grants().begin(), policy.grants().end(),
                      [&](const auto& g) { return g.access == Access::write && is_within(a, g.path); });
      if (!in_writable || !pinned.insert(a.string()).second) continue;
      pins.push_back(params.filters(a, "PARENT", "literal", "a folder above a protected path (no rename)"));
    }
  };
  for (const auto& d : policy.denies()) pin_above(d.path);
  for (const auto& r : policy.read_only()) pin_above(r.path);
  if (!pins.empty()) {
    t += "\n; --- folders above protected paths inside writable ones: no rename, no removal ---\n";
    t += rule("deny file-write-unlink", pins);
  }

  if (policy.forbid_new_git()) {
    // A regex cannot take a parameter: the fixed, case-insensitive name `.git`
    // (APFS is usually case-insensitive) is combined with the run folder's
    // parameter. Covers git init, a gitfile, a link or a rename to `.git`.
    t += "\n; --- no new repository inside the run folder ---\n";
    const std::string folder = params.filters(policy.run_folder(), "GRANT", "subpath", "the run folder");
    const std::string where = params.has_alias(policy.run_folder()) ? "(require-any " + folder + ")" : folder;
    t += "(deny file-write-create\n  (require-all\n    " + where + "\n    (regex #\"/\\.[gG][iI][tT]$\")))\n";
  }

  t += "\n; --- network ---\n";
  if (mode == NetworkMode::offline) {
    t += "; Offline: no network rule at all; (deny default) refuses every connection\n";
    t += "; and name lookup, Local servers included.\n";
  } else {
    t += "; The one way out is the run's proxy on localhost, which applies the host rule.\n";
    t += "; Its port is a number parallex chose for this run, not user data, and a\n";
    t += "; (remote ip) filter cannot take a parameter, so it is written here.\n";
    t += "(allow network-outbound (remote ip \"localhost:" + std::to_string(proxy_port) + "\"))\n";
    if (policy.network().local_servers) {
      t += "; Local servers is on: reach anything listening on this Mac without the\n";
      t += "; proxy, and start servers (reachable from the network unless a firewall\n";
      t += "; blocks them).\n";
      const auto& ports = policy.network().local_server_ports;
      if (ports.empty()) {
        t += "(allow network-outbound (remote ip \"localhost:*\"))\n";
      } else {
        t += "; ... only on the ports it names.\n";
        for (auto port : ports)
          t += "(allow network-outbound (remote ip \"localhost:" + std::to_string(port) + "\"))\n";
      }
      t += "(allow network-bind (local ip \"*:*\"))\n";
      t += "(allow network-inbound (local ip \"*:*\"))\n";
    }
  }

  SeatbeltProfile out;
  out.text = std::move(t);
  out.params = params.bound();
  out.reasons = params.reasons();
  return out;
}

std::vector<std::string> sandbox_exec_argv(const SeatbeltProfile& profile,
                                           const std::vector<std::string>& command) {
  std::vector<std::string> argv{std::string(kSandboxExec), "-p", profile.text};
  for (const auto& [name, value] : profile.params) {
    argv.emplace_back("-D");
    argv.push_back(name + "=" + value);
  }
  argv.emplace_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace px::seatbelt
