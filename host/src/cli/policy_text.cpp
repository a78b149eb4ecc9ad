#include "cli/policy_text.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace px::cli {

namespace {

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::string origin_and_reason(const policy::Origin& origin, const std::string& reason) {
  return "[" + origin.describe() + "]" + (reason.empty() ? "" : " " + reason);
}

}  // namespace

std::string render_policy(const policy::Policy& p) {
  using policy::Access;
  std::ostringstream out;
  out << "Run folder  " << p.run_folder().string() << "\n";
  out << "Home        " << p.run_home().string()
      << (p.run_home() == p.user_home() ? " (your home: only the carve-ins below)" : " (the agent's own)")
      << "\n";
  out << "Temp        " << p.temp_dir().string() << " (private to the run)\n";
  out << "Harness     " << (p.harness().empty() ? "none (the profile alone)" : p.harness()) << "\n";
  for (const auto& w : p.weakenings()) out << "WEAKENED    " << w << "\n";

  out << "\nFilesystem (a deny beats an allow; read-only beats a writable folder around it)\n";
  for (const auto& g : p.grants()) {
    std::error_code ec;
    // Absent paths stay in the policy (they may appear during the run) but are marked.
    const bool absent = !std::filesystem::exists(g.path, ec) && g.path != p.temp_dir();
    out << "  " << pad(g.access == Access::write ? "read-write" : "read", 11) << pad(g.path.string(), 44)
        << origin_and_reason(g.origin, g.reason) << (absent ? " (absent)" : "") << "\n";
  }
  const auto project = p.project_files();
  for (const auto& r : p.read_only())
    if (std::find(project.begin(), project.end(), &r) == project.end())
      out << "  " << pad("read-only", 11) << pad(r.path.string(), 44) << origin_and_reason(r.origin, r.reason)
          << "\n";
  for (const auto& d : p.denies())
    out << "  " << pad("deny", 11) << pad(d.path.string(), 44) << origin_and_reason(d.origin, d.reason)
        << "\n";
  for (const auto& f : p.fixed_folders())
    out << "  " << pad("fixed", 11) << pad(f.path.string(), 44) << origin_and_reason(f.origin, f.reason)
        << "\n";
  for (const auto& c : p.cache_layers())
    out << "  " << pad("cache", 11) << pad(c.lower.string() + " at " + c.view.string(), 44)
        << origin_and_reason(c.origin, c.reason) << "\n";
  if (p.forbid_new_git())
    out << "  " << pad("no new .git", 11) << pad("inside " + p.run_folder().string(), 44) << "["
        << p.forbid_new_git_origin().describe() << "]\n";
  out << "  everything else: denied\n";
  if (!project.empty()) {
    out << "\nFiles other programs run later (read-only in every run; made by a run: moved aside into its "
           "record)\n";
    for (const auto* r : project) {
      std::error_code ec;
      const bool absent = !std::filesystem::exists(std::filesystem::symlink_status(r->path, ec));
      out << "  "
          << pad(r->path.lexically_relative(p.run_folder()).string() + (absent ? " (absent)" : ""), 40)
          << origin_and_reason(r->origin, r->reason) << "\n";
    }
  }

  out << "\nProcesses   at most " << p.process_limit().max
      << " at once, threads included (a fork bomb stops there) [" << p.process_limit().origin.describe()
      << "]\n";
  // Only the guarded ones: what the run sees as its own and the home gets only when applied.
  bool home_header = false;
  for (const auto& f : p.home_files()) {
    if (!f.guarded()) continue;
    if (!home_header)
      out << "\nThe harness's settings in your home (the run writes its own copy; data lands, a changed "
             "setting is held back: parallex runs apply; scratch is dropped at the end)\n";
    home_header = true;
    std::string what = f.kind == policy::HomeKind::settings  ? "settings"
                       : f.kind == policy::HomeKind::scratch ? "scratch, the run's own: " + f.reason
                                                             : "data; keys that run commands:";
    if (f.kind == policy::HomeKind::data)
      for (const auto& k : f.keys)
        if (k.kind == policy::HomeKind::settings) what += " " + k.text;
    out << "  " << pad(f.path.string() + (f.directory ? "/" : ""), 44) << origin_and_reason(f.origin, what)
        << "\n";
  }

  const auto& net = p.network();
  out << "\nNetwork     " << policy::to_string(net.mode) << " [" << net.mode_origin.describe() << "]";
  if (net.mode == policy::NetworkMode::offline)
    out << ": no connection at all";
  else if (net.mode == policy::NetworkMode::allowlist && net.hosts.empty())
    out << ": no host; only this machine's servers (Local servers), through the run's proxy, logged";
  else
    out << ": only through the run's proxy, every connection logged";
  out << "\n";
  for (const auto& h : net.hosts) {
    const bool wildcard = h.pattern.rfind("*.", 0) == 0;
    const std::string what =
        wildcard ? "names under " + h.pattern.substr(2) : h.pattern + " and its subdomains";
    std::string ports;
    if (h.port) {
      ports = "port " + std::to_string(*h.port);
    } else {
      for (auto port : net.ports) ports += (ports.empty() ? "ports " : " ") + std::to_string(port);
    }
    out << "  allow     " << pad(what + ", " + ports, 44) << "[" << h.origin.describe() << "]\n";
  }
  if (net.mode != policy::NetworkMode::offline) {
    out << "  ports    ";
    for (auto port : net.ports) out << " " << port;
    out << (net.mode == policy::NetworkMode::online ? " (every host)" : " (hosts allowed without a port)");
    for (const auto& pub : net.published)
      out << "\n  publish   "
          << pad("the run's port " + std::to_string(pub.inside) +
                     " on 127.0.0.1:" + (pub.host ? std::to_string(pub.host) : std::string("(free port)")),
                 44)
          << "[" << pub.origin.describe() << "]";
    std::string local = "off";
    if (net.local_servers) {
      std::string ports;
      for (auto port : net.local_server_ports) ports += (ports.empty() ? "" : ",") + std::to_string(port);
      local = (ports.empty() ? std::string("on, every port") : "on, ports " + ports) + " [" +
              net.local_servers_origin.describe() + "]";
    }
    out << "\n  local servers " << local << "\n";
  }

  const auto& env = p.environment();
  out << "\nEnvironment (only kept variables pass; strip beats keep)\n";
  for (const auto& s : env.set)
    out << "  set   " << pad(s.name + "=" + (s.secret ? "[REDACTED]" : s.value), 44)
        << origin_and_reason(s.origin, s.reason) << "\n";
  for (const auto& k : env.keep)
    out << "  keep  " << pad(k.pattern, 44) << origin_and_reason(k.origin, k.reason) << "\n";
  for (const auto& s : env.strip)
    out << "  strip " << pad(s.pattern, 44) << origin_and_reason(s.origin, s.reason) << "\n";
  for (const auto& s : env.pass)
    out << "  pass  " << pad(s.pattern, 44) << origin_and_reason(s.origin, s.reason) << "\n";

  if (!p.nested_sandbox().empty()) {
    out << "\nThe harness's own sandbox, turned off inside the seal (it cannot nest)\n";
    for (const auto& n : p.nested_sandbox()) {
      const std::string what =
          n.kind == policy::NestedSandboxSwitch::Kind::env ? n.name + "=" + n.value : "argument " + n.value;
      out << "  " << pad(what, 50) << origin_and_reason(n.origin, n.reason) << "\n";
    }
  }
  if (!p.suggested_hosts().empty()) {
    out << "\nHosts the harness needs (allowed only if the network rule allows them)\n";
    for (const auto& s : p.suggested_hosts()) {
      const bool allowed = p.may_connect(s.host, 443);
      out << "  " << pad(s.host, 30) << (allowed ? "allowed  " : "NOT allowed  ")
          << origin_and_reason(s.origin, s.reason) << "\n";
    }
  }
  out << render_broker_policy(p);
  out << "\nDigest      " << p.digest() << "\n";
  return out.str();
}

}  // namespace px::cli
