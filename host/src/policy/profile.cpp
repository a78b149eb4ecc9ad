#include "policy/profile.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "common/paths.hpp"
#include "common/port.hpp"
#include "common/shown.hpp"
#include "policy/ask.hpp"
#include "policy/broker_yaml.hpp"
#include "policy/profile_reader.hpp"
#include "policy/value_checks.hpp"
#include "policy/yaml_values.hpp"

namespace px::policy {

namespace {

// Paths in profiles start with '/', '~' or a placeholder; anything else is
// relative and would depend on where parallex was started.
void check_paths(ProfileReader& r, const YAML::Node& node, const std::vector<ProfileEntry>& entries,
                 const std::string& key) {
  for (const auto& e : entries) {
    const std::string& v = e.value;
    const bool ok =
        !v.empty() && (v[0] == '/' || v == "~" || v.rfind("~/", 0) == 0 || v.rfind("{run_folder}", 0) == 0 ||
                       v.rfind("{run_home}", 0) == 0 || v.rfind("{temp}", 0) == 0);
    if (!ok && !r.error) {
      r.error =
          Error::invalid(r.file() + ":" + std::to_string(e.line) + ": " + key + ": the path '" + shown(v) +
                         "' is relative; start it with '/', '~/', {run_folder}, {run_home} or {temp}");
    }
    // The same check of a path's text as a plugin's (value_checks.hpp).
    if (const std::string problem = check_path_text(v); ok && !problem.empty() && !r.error)
      r.error = Error::invalid(r.file() + ":" + std::to_string(e.line) + ": " + key + ": the path \"" +
                               shown(v) + "\" " + problem);
  }
  (void)node;
}

}  // namespace

Result<Profile> parse_profile(std::string_view text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error::invalid(name + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg);
  }
  Profile p;
  p.name = name;
  if (!root || root.IsNull()) return p;
  PX_TRY(refuse_nul_in_yaml(root, name));
  ProfileReader r(name);
  try {
    if (!r.keys(root, "",
                {"version", "description", "filesystem", "network", "environment", "dangerously_allow_home",
                 "requests", "credentials", "tool_caches", "limits"}))
      return *r.error;
    read_broker_sections(r, root, p.broker);
    if (auto v = root["version"]) {
      if (!v.IsScalar() || v.Scalar() != "1") r.fail(v, "version", "only version 1 is known");
    }
    if (auto d = root["description"]) {
      if (auto s = r.scalar(d, "description")) p.description = *s;
    }
    if (auto fsn = root["filesystem"]) {
      if (r.keys(fsn, "filesystem",
                 {"read", "write", "read_only", "deny", "forbid_new_git", "dangerously_writable"})) {
        p.read = r.entries(fsn["read"], "filesystem.read", "path");
        p.write = r.entries(fsn["write"], "filesystem.write", "path");
        p.read_only = r.entries(fsn["read_only"], "filesystem.read_only", "path");
        p.deny = r.entries(fsn["deny"], "filesystem.deny", "path");
        p.dangerously_writable =
            r.entries(fsn["dangerously_writable"], "filesystem.dangerously_writable", "path");
        check_paths(r, fsn, p.read, "filesystem.read");
        check_paths(r, fsn, p.write, "filesystem.write");
        check_paths(r, fsn, p.read_only, "filesystem.read_only");
        check_paths(r, fsn, p.deny, "filesystem.deny");
        check_paths(r, fsn, p.dangerously_writable, "filesystem.dangerously_writable");
        if (auto f = fsn["forbid_new_git"]) {
          p.forbid_new_git = r.boolean(f, "filesystem.forbid_new_git");
          p.forbid_new_git_line = r.line(f);
        }
      }
    }
    if (auto net = root["network"]) {
      if (r.keys(net, "network", {"mode", "allow", "ports", "local_servers", "ask"})) {
        if (auto a = net["ask"]) {
          p.ask_line = r.line(a);
          if (auto s = r.scalar(a, "network.ask")) {
            auto parsed = parse_ask(*s, name + ":" + std::to_string(p.ask_line) + ": network.ask");
            if (parsed)
              p.ask = parsed.value();
            else if (!r.error)
              r.error = parsed.error();
          }
        }
        if (auto m = net["mode"]) {
          auto s = r.scalar(m, "network.mode");
          if (s == "offline")
            p.network_mode = NetworkMode::offline;
          else if (s == "online")
            p.network_mode = NetworkMode::online;
          else if (s == "allowlist")
            p.network_mode = NetworkMode::allowlist;
          else if (s)
            r.fail(m, "network.mode", "'" + *s + "' is not a mode; use offline, allowlist or online");
          p.network_mode_line = r.line(m);
        }
        p.hosts = r.entries(net["allow"], "network.allow", "host");
        for (const auto& h : p.hosts) {
          if (auto problem = check_host_pattern(normalize_host(h.value)); !problem.empty() && !r.error)
            r.error = Error::invalid(name + ":" + std::to_string(h.line) + ": network.allow: " + problem);
        }
        p.ports = r.entries(net["ports"], "network.ports", "port");
        for (const auto& port : p.ports) {
          if (!parse_port(port.value) && !r.error)
            r.error = Error::invalid(name + ":" + std::to_string(port.line) + ": network.ports: '" +
                                     port.value + "' is not a port between 1 and 65535");
        }
        if (auto l = net["local_servers"]) {
          p.local_servers_line = r.line(l);
          if (l.IsSequence()) {
            // `local_servers: [3000, 5432]`: on, for these ports only.
            for (const auto& item : l) {
              const std::string port_text = item.IsScalar() ? item.Scalar() : "";
              const auto value = parse_port(port_text);
              if (!value) {
                r.fail(item, "network.local_servers",
                       "'" + port_text + "' is not a port between 1 and 65535");
                break;
              }
              p.local_server_ports.push_back(*value);
            }
            if (p.local_server_ports.empty() && !r.error)
              r.fail(l, "network.local_servers",
                     "an empty list of ports; write false to turn Local servers off");
            p.local_servers = true;
          } else {
            p.local_servers = r.boolean(l, "network.local_servers");
          }
        }
      }
    }
    if (auto env = root["environment"]) {
      if (r.keys(env, "environment", {"keep", "strip", "set", "pass"})) {
        p.env_keep = r.entries(env["keep"], "environment.keep", "name");
        p.env_strip = r.entries(env["strip"], "environment.strip", "name");
        p.env_pass = r.entries(env["pass"], "environment.pass", "name");
        for (const auto& e : p.env_pass)
          if (auto problem = check_env_name(e.value); !problem.empty() && !r.error)
            r.error = Error::invalid(name + ":" + std::to_string(e.line) + ": environment.pass: " + problem);
        for (auto* list : {&p.env_keep, &p.env_strip})
          for (const auto& e : *list)
            if (auto problem = check_env_pattern(e.value); !problem.empty() && !r.error)
              r.error = Error::invalid(name + ":" + std::to_string(e.line) + ": environment: " + problem);
        if (auto set = env["set"]; set && !set.IsNull()) {
          if (!set.IsMap()) {
            r.fail(set, "environment.set", "expected a mapping NAME: value");
          } else {
            for (const auto& kv : set) {
              auto value = r.scalar(kv.second, "environment.set." + kv.first.Scalar());
              if (value) p.env_set.push_back({kv.first.Scalar(), *value, r.line(kv.first)});
            }
          }
        }
      }
    }
    if (auto limits = root["limits"]) {
      if (r.keys(limits, "limits", {"processes"})) {
        if (auto n = limits["processes"]) {
          std::uint64_t value = 0;
          const std::string given = n.IsScalar() ? n.Scalar() : "";
          auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), value);
          if (ec != std::errc() || end != given.data() + given.size())
            r.fail(n, "limits.processes", "'" + given + "' is not a number of processes");
          else if (auto why = check_process_limit(value); !why.empty())
            r.fail(n, "limits.processes", why);
          p.processes = value;
          p.processes_line = r.line(n);
        }
      }
    }
    if (auto t = root["tool_caches"]) {
      if (auto v = r.scalar(t, "tool_caches")) {
        const bool path = !v->empty() && ((*v)[0] == '/' || *v == "~" || v->rfind("~/", 0) == 0 ||
                                          v->rfind("{temp}", 0) == 0 || v->rfind("{run_home}", 0) == 0);
        if (*v != "per_run" && *v != "overlay" && *v != "off" && !path)
          r.fail(t, "tool_caches",
                 "'" + *v + "' is not per_run, overlay, off, or a folder written from '/' or '~/'");
        p.tool_caches = ProfileEntry{*v, "", r.line(t)};
      }
    }
    if (auto d = root["dangerously_allow_home"]) {
      p.dangerously_allow_home = r.boolean(d, "dangerously_allow_home").value_or(false);
      p.dangerously_allow_home_line = r.line(d);
    }
  } catch (const YAML::Exception& e) {
    return Error::invalid(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (r.error) return *r.error;
  return p;
}

}  // namespace px::policy
