#include "policy/profile_json.hpp"

namespace px::policy {

using nlohmann::json;

namespace {

json entries(const std::vector<ProfileEntry>& list) {
  json out = json::array();
  for (const auto& e : list) out.push_back({e.value, e.reason, e.line});
  return out;
}

std::vector<ProfileEntry> entries_from(const json& j) {
  std::vector<ProfileEntry> out;
  for (const auto& e : j)
    out.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>(), e.at(2).get<int>()});
  return out;
}

template <class T>
json optional(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

}  // namespace

json profile_to_json(const Profile& p) {
  json env_set = json::array();
  for (const auto& s : p.env_set) env_set.push_back({s.name, s.value, s.line});
  return {{"name", p.name},
          {"description", p.description},
          {"read", entries(p.read)},
          {"write", entries(p.write)},
          {"read_only", entries(p.read_only)},
          {"deny", entries(p.deny)},
          {"dangerously_writable", entries(p.dangerously_writable)},
          {"forbid_new_git", optional(p.forbid_new_git)},
          {"forbid_new_git_line", p.forbid_new_git_line},
          {"processes", optional(p.processes)},
          {"processes_line", p.processes_line},
          {"network_mode", p.network_mode ? json(static_cast<int>(*p.network_mode)) : json()},
          {"network_mode_line", p.network_mode_line},
          {"hosts", entries(p.hosts)},
          {"ports", entries(p.ports)},
          {"local_servers", optional(p.local_servers)},
          {"local_servers_line", p.local_servers_line},
          {"local_server_ports", p.local_server_ports},
          {"ask_seconds", p.ask ? json(p.ask->count()) : json()},
          {"ask_line", p.ask_line},
          {"env_keep", entries(p.env_keep)},
          {"env_strip", entries(p.env_strip)},
          {"env_pass", entries(p.env_pass)},
          {"tool_caches", p.tool_caches ? entries({*p.tool_caches}) : json()},
          {"env_set", env_set},
          {"dangerously_allow_home", p.dangerously_allow_home},
          {"dangerously_allow_home_line", p.dangerously_allow_home_line}};
}

Result<Profile> profile_from_json(const json& j, const std::string& display_name) {
  try {
    Profile p;
    p.name = j.at("name").get<std::string>();
    p.description = j.at("description").get<std::string>();
    p.read = entries_from(j.at("read"));
    p.write = entries_from(j.at("write"));
    p.read_only = entries_from(j.at("read_only"));
    p.deny = entries_from(j.at("deny"));
    p.dangerously_writable = entries_from(j.at("dangerously_writable"));
    if (!j.at("forbid_new_git").is_null()) p.forbid_new_git = j.at("forbid_new_git").get<bool>();
    p.forbid_new_git_line = j.at("forbid_new_git_line").get<int>();
    if (!j.at("processes").is_null()) p.processes = j.at("processes").get<std::uint64_t>();
    p.processes_line = j.at("processes_line").get<int>();
    if (!j.at("network_mode").is_null())
      p.network_mode = static_cast<NetworkMode>(j.at("network_mode").get<int>());
    p.network_mode_line = j.at("network_mode_line").get<int>();
    p.hosts = entries_from(j.at("hosts"));
    p.ports = entries_from(j.at("ports"));
    if (!j.at("local_servers").is_null()) p.local_servers = j.at("local_servers").get<bool>();
    p.local_servers_line = j.at("local_servers_line").get<int>();
    p.local_server_ports = j.at("local_server_ports").get<std::vector<std::uint16_t>>();
    if (!j.at("ask_seconds").is_null()) p.ask = std::chrono::seconds(j.at("ask_seconds").get<std::int64_t>());
    p.ask_line = j.at("ask_line").get<int>();
    p.env_keep = entries_from(j.at("env_keep"));
    p.env_strip = entries_from(j.at("env_strip"));
    p.env_pass = entries_from(j.at("env_pass"));
    if (!j.at("tool_caches").is_null()) p.tool_caches = entries_from(j.at("tool_caches")).at(0);
    for (const auto& s : j.at("env_set"))
      p.env_set.push_back({s.at(0).get<std::string>(), s.at(1).get<std::string>(), s.at(2).get<int>()});
    p.dangerously_allow_home = j.at("dangerously_allow_home").get<bool>();
    p.dangerously_allow_home_line = j.at("dangerously_allow_home_line").get<int>();
    return p;
  } catch (const json::exception& e) {
    return Error::internal("the built-in profile " + display_name + " could not be decoded (" + e.what() +
                           "); this build of Parallex is broken: rebuild it");
  }
}

std::vector<std::uint8_t> profile_to_cbor(const Profile& profile) {
  return json::to_cbor(profile_to_json(profile));
}

Result<Profile> profile_from_cbor(const unsigned char* data, std::size_t size,
                                  const std::string& display_name) {
  const json j = json::from_cbor(data, data + size, true, false);
  if (j.is_discarded())
    return Error::internal("the built-in profile " + display_name +
                           " could not be decoded; this build of Parallex is broken: rebuild it");
  return profile_from_json(j, display_name);
}

}  // namespace px::policy
