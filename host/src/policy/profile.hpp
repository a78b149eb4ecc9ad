#pragma once
// Profiles: YAML policy presets (profiles/*.yaml, embedded in the binary, or a
// user's file). Parsing is strict: an unknown key, a wrong type, a relative
// path or a malformed host is an error naming the file, line and key.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "policy/broker_sections.hpp"
#include "policy/policy.hpp"

namespace px::policy {

struct ProfileEntry {
  std::string value;  // a path (with placeholders), a host, or an env pattern
  std::string reason;
  int line = 0;
};

struct ProfileSetting {
  std::string name;
  std::string value;
  int line = 0;
};

struct Profile {
  std::string name;  // "default", or the file's path
  // The file it was read from (its real path), or empty for a built-in one:
  // read-only in the run that loads it (compose.cpp), and checked against
  // what that run may write (run/profile_trust.hpp).
  std::filesystem::path source_file;
  std::string description;
  std::vector<ProfileEntry> read, write, read_only, deny;
  // The opt-out: read-only paths (files other programs run later) the run may
  // write after all. A weakening, said at the start of the run.
  std::vector<ProfileEntry> dangerously_writable;
  std::optional<bool> forbid_new_git;
  int forbid_new_git_line = 0;
  // `limits: {processes: N}`: the most processes a run may have at once.
  std::optional<std::uint64_t> processes;
  int processes_line = 0;
  std::optional<NetworkMode> network_mode;
  int network_mode_line = 0;
  std::vector<ProfileEntry> hosts;
  std::vector<ProfileEntry> ports;  // value is the decimal port
  std::optional<bool> local_servers;
  std::vector<std::uint16_t> local_server_ports;  // `local_servers: [3000, 5432]`; empty: every port
  int local_servers_line = 0;
  std::optional<std::chrono::seconds> ask;  // `network.ask: true | SECONDS | false`
  int ask_line = 0;
  std::vector<ProfileEntry> env_keep, env_strip;
  std::vector<ProfileEntry> env_pass;  // host variables passed by exact name, beating strip
  // Where the run's package managers keep their caches: "per_run" (in the
  // run's temp dir), "off", or a folder of the user's (made writable).
  std::optional<ProfileEntry> tool_caches;
  std::vector<ProfileSetting> env_set;
  bool dangerously_allow_home = false;
  int dangerously_allow_home_line = 0;
  BrokerSections broker;  // requests: and credentials: (broker_yaml.hpp)
};

// Parses one profile. `display_name` names it in errors ("default.yaml", a path).
Result<Profile> parse_profile(std::string_view yaml_text, const std::string& display_name);

// NAME (an embedded profile: default, offline, developer, or a file
// <config>/parallex/profiles/NAME.yaml) or a path to a YAML file.
Result<Profile> load_profile(const std::string& name_or_file);

// The profiles built into the binary, by name, with their YAML text and the
// profile as parsed at build time (profile_json.hpp's CBOR form).
struct EmbeddedProfile {
  const char* name;
  const char* text;
  const unsigned char* parsed;
  std::size_t parsed_size;
};
const std::vector<EmbeddedProfile>& embedded_profiles();

}  // namespace px::policy
