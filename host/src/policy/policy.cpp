#include "policy/policy.hpp"

#include <algorithm>
#include <cctype>

#include "common/paths.hpp"
#include "policy/policy_json.hpp"
#include "policy/sha256.hpp"

namespace px::policy {

const char* to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::offline: return "offline";
    case NetworkMode::allowlist: return "allowlist";
    case NetworkMode::online: return "online";
  }
  return "offline";
}

namespace {

std::string describe_rule(const char* verb, const fs::path& path, const std::string& reason, const Origin& origin) {
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

// The WHATWG URL "ends in a number" rule: a name whose last label is decimal or
// 0x-hex is parsed as IPv4 by resolvers and browsers (127.1, 0x7f.1, 2130706433).
bool ends_in_number(std::string_view name) {
  std::string_view last = name.substr(name.find_last_of('.') == std::string_view::npos ? 0 : name.find_last_of('.') + 1);
  if (last.empty()) return false;
  if (last.find_first_not_of("0123456789") == std::string_view::npos) return true;
  if (last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X'))
    return last.substr(2).find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  return false;
}

const PathDeny* Policy::deny_covering(const fs::path& path) const {
  return most_specific(denies_, path, [](const PathDeny&) { return true; });
}

Decision Policy::explain_read(const fs::path& raw) const {
  const fs::path path = normal_absolute(raw);
  if (const auto* d = deny_covering(path)) return {false, describe_rule("deny", d->path, d->reason, d->origin)};
  if (const auto* g = most_specific(grants_, path, [](const PathGrant&) { return true; }))
    return {true, describe_rule(g->access == Access::write ? "read-write" : "read", g->path, g->reason, g->origin)};
  return {false, "not inside any readable path"};
}

Decision Policy::explain_write(const fs::path& raw) const {
  const fs::path path = normal_absolute(raw);
  if (const auto* d = deny_covering(path)) return {false, describe_rule("deny", d->path, d->reason, d->origin)};
  if (const auto* r = most_specific(read_only_, path, [](const ReadOnlyPath&) { return true; }))
    return {false, describe_rule("read-only", r->path, r->reason, r->origin)};
  // Landlock grants the union of the rules along a path, so any writable root
  // above the path makes it writable; read-only carve-outs are separate rules.
  if (const auto* g = most_specific(grants_, path, [](const PathGrant& e) { return e.access == Access::write; }))
    return {true, describe_rule("read-write", g->path, g->reason, g->origin)};
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
    if (network_.local_servers) return {true, "Local servers is on (" + network_.local_servers_origin.describe() + ")"};
    return {false, "localhost needs Local servers (--local-servers)"};
  }
  if (auto problem = check_host_pattern(host); !problem.empty() || host.find('*') != std::string::npos)
    return {false, "not a plain host name"};
  if (std::find(network_.ports.begin(), network_.ports.end(), port) == network_.ports.end())
    return {false, "port " + std::to_string(port) + " is not allowed"};
  if (network_.mode == NetworkMode::online) return {true, "online (" + network_.mode_origin.describe() + ")"};
  for (const auto& rule : network_.hosts)
    if (host_matches(host, rule.pattern)) return {true, "allow " + rule.pattern + " (" + rule.origin.describe() + ")"};
  return {false, "outside the network rule"};
}

std::string Policy::digest() const { return sha256_hex(to_json(*this, /*with_origins=*/false).dump()); }

std::string normalize_host(std::string_view host) {
  std::string out(host);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

std::string check_host_pattern(std::string_view pattern) {
  const std::string p(pattern);
  if (p.empty()) return "a host is empty";
  if (p.find("://") != std::string::npos) return "'" + p + "' has a scheme: give the host name alone, e.g. github.com";
  if (p.find('/') != std::string::npos) return "'" + p + "' has a path: give the host name alone";
  if (p.find(':') != std::string::npos) return "'" + p + "' has a port or is an IPv6 address: give a host name alone";
  if (p.find('@') != std::string::npos) return "'" + p + "' has a user part: give the host name alone";
  std::string_view name = p;
  if (name.rfind("*.", 0) == 0) name.remove_prefix(2);
  if (name.find('*') != std::string_view::npos)
    return "'" + p + "' has a wildcard in the wrong place: only a leading '*.' is allowed";
  if (name.size() > 253) return "'" + p + "' is longer than a host name can be";
  std::size_t label_len = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      if (label_len == 0) return "'" + p + "' has an empty label";
      if (label_len > 63) return "'" + p + "' has a label longer than 63 characters";
      label_len = 0;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!(std::isalnum(c) || c == '-'))
      return "'" + p + "' holds a character a host name cannot ('" + std::string(1, name[i]) +
             "'); non-ASCII names must be given in punycode (xn--...)";
    ++label_len;
  }
  if (ends_in_number(name)) return "'" + p + "' is an IP address: allow a host name instead";
  return {};
}

bool host_matches(std::string_view host, std::string_view pattern) {
  if (pattern.rfind("*.", 0) == 0) {
    std::string_view base = pattern.substr(1);  // ".github.com"
    return host.size() > base.size() && host.substr(host.size() - base.size()) == base;
  }
  if (host == pattern) return true;
  return host.size() > pattern.size() && host.substr(host.size() - pattern.size()) == pattern &&
         host[host.size() - pattern.size() - 1] == '.';
}

}  // namespace px::policy
