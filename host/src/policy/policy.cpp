#include "policy/policy.hpp"

#include <algorithm>
#include <cctype>

#include "common/host_rule.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/sha256.hpp"
#include "policy/policy_json.hpp"

namespace px::policy {

const char* to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::offline:
      return "offline";
    case NetworkMode::allowlist:
      return "allowlist";
    case NetworkMode::online:
      return "online";
  }
  return "offline";
}

namespace {

std::string describe_rule(const char* verb, const fs::path& path, const std::string& reason,
                          const Origin& origin) {
  std::string out = std::string(verb) + " " + path.string() + " (" + origin.describe();
  if (!reason.empty()) out += ": " + reason;
  return out + ")";
}

// The most specific (longest) entry whose path covers `path`.
template <class Entry, class Pred>
const Entry* most_specific(const std::vector<Entry>& entries, const fs::path& path, Pred pred) {
  const Entry* best = nullptr;
  for (const auto& e : entries) {
    if (!pred(e) || !is_within(path, e.path)) continue;
    if (!best || e.path.native().size() > best->path.native().size()) best = &e;
  }
  return best;
}

}  // namespace

std::vector<std::uint16_t> NetworkRule::reachable_ports() const {
  std::vector<std::uint16_t> out;
  if (mode == NetworkMode::offline) return out;
  out = ports;
  for (const auto& h : hosts)
    if (h.port) out.push_back(*h.port);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool NetworkRule::local_port_allowed(std::uint16_t port) const {
  if (!local_servers) return false;
  return local_server_ports.empty() ||
         std::binary_search(local_server_ports.begin(), local_server_ports.end(), port);
}

std::vector<const ReadOnlyPath*> Policy::project_files() const {
  std::vector<const ReadOnlyPath*> out;
  if (run_folder_.empty()) return out;
  for (const auto& r : read_only_) {
    if (r.path == run_folder_ || !is_within(r.path, run_folder_)) continue;
    // A git dir's files (the run folder's, a nested repository's) are checked
    // by what they say, not moved aside for being there.
    const fs::path rel = r.path.lexically_relative(run_folder_);
    if (std::none_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == ".git"; }))
      out.push_back(&r);
  }
  return out;
}

bool HostRule::allows_port(std::uint16_t p, const std::vector<std::uint16_t>& default_ports) const {
  if (port) return *port == p;
  return std::find(default_ports.begin(), default_ports.end(), p) != default_ports.end();
}

const PathDeny* Policy::deny_covering(const fs::path& path) const {
  return most_specific(denies_, path, [](const PathDeny&) { return true; });
}

Decision Policy::explain_read(const fs::path& raw) const {
  const fs::path path = normal_absolute(raw);
  if (const auto* d = deny_covering(path))
    return {false, describe_rule("deny", d->path, d->reason, d->origin)};
  if (const auto* g = most_specific(grants_, path, [](const PathGrant&) { return true; }))
    return {true,
            describe_rule(g->access == Access::write ? "read-write" : "read", g->path, g->reason, g->origin)};
  return {false, "not inside any readable path"};
}

Decision Policy::explain_write(const fs::path& raw) const {
  const fs::path path = normal_absolute(raw);
  if (const auto* d = deny_covering(path))
    return {false, describe_rule("deny", d->path, d->reason, d->origin)};
  if (const auto* r = most_specific(read_only_, path, [](const ReadOnlyPath&) { return true; }))
    return {false, describe_rule("read-only", r->path, r->reason, r->origin)};
  // Landlock grants the union of the rules along a path, so any writable root
  // above the path makes it writable; read-only carve-outs are separate rules.
  if (const auto* g =
          most_specific(grants_, path, [](const PathGrant& e) { return e.access == Access::write; })) {
    // A folder of fixed entries (a read-only mount in the view): itself, and a new entry in it.
    for (const auto& f : fixed_folders_) {
      const bool new_entry =
          path.parent_path() == f.path && !std::binary_search(f.open.begin(), f.open.end(), path);
      if (path == f.path || new_entry)
        return {false, describe_rule("fixed entries", f.path, f.reason, f.origin)};
    }
    return {true, describe_rule("read-write", g->path, g->reason, g->origin)};
  }
  if (most_specific(grants_, path, [](const PathGrant&) { return true; }))
    return {false, "readable only: no writable path covers it"};
  return {false, "not inside any writable path"};
}

Decision Policy::explain_create_git(const fs::path& raw) const {
  const fs::path path = normal_absolute(raw);
  if (forbid_new_git_ && is_within(path, run_folder_))
    return {false, "no new .git inside the run folder (" + forbid_new_git_origin_.describe() + ")"};
  return explain_write(path);
}

Decision Policy::explain_connect(std::string_view raw_host, std::uint16_t port) const {
  const std::string host = normalize_host(raw_host);
  if (network_.mode == NetworkMode::offline)
    return {false, "the network is offline (" + network_.mode_origin.describe() + ")"};
  const bool local = host == "localhost";
  if (local) {
    if (network_.local_port_allowed(port))
      return {true, "Local servers is on (" + network_.local_servers_origin.describe() + ")"};
    if (network_.local_servers)
      return {false,
              "Local servers is on for other ports only (" + network_.local_servers_origin.describe() + ")"};
    return {false, "localhost needs Local servers (--local-servers)"};
  }
  std::string name;
  if (check_dns_name(host, name) != NameProblem::none) return {false, "not a plain host name"};
  if (network_.mode == NetworkMode::online) {
    if (std::find(network_.ports.begin(), network_.ports.end(), port) == network_.ports.end())
      return {false, "port " + std::to_string(port) + " is not allowed"};
    return {true, "online (" + network_.mode_origin.describe() + ")"};
  }
  bool name_allowed = false;
  for (const auto& rule : network_.hosts) {
    if (!host_matches(name, rule.pattern)) continue;
    name_allowed = true;
    if (rule.allows_port(port, network_.ports))
      return {true, "allow " + rule.text() + " (" + rule.origin.describe() + ")"};
  }
  if (name_allowed) return {false, "port " + std::to_string(port) + " is not allowed for " + name};
  return {false, "outside the network rule"};
}

std::string Policy::digest() const {
  return sha256_hex(to_json_text(to_json(*this, /*with_origins=*/false)));
}

}  // namespace px::policy
