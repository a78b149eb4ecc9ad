#pragma once
// Loads a built plugin with dlopen and drives it through the C ABI only, with
// sinks that record every call, so the tests see exactly what a host would.
#include <parallex/plugin_abi.h>

#include <optional>
#include <string>
#include <vector>

namespace px_test {

struct Claim {
  int confidence = 0;
  std::string reason;
};

struct DetectResult {
  int rc = -1;
  std::vector<Claim> claims;
  std::vector<std::string> errors;
};

struct PathEntry {
  px_access access;
  std::string path;
  std::string reason;
};
struct EnvEntry {
  px_env_action action;
  std::string name;
  std::string value;  // PX_ENV_SET only
  std::string reason;
};
struct ConfigDir {
  std::string variable;
  std::string path;
  std::string reason;
};
struct Nested {
  px_nested_kind kind;
  std::string name;
  std::string value;
  std::string reason;
};
struct Named {
  std::string value;
  std::string reason;
};

struct Credential {
  std::string variable;
  std::vector<std::string> hosts;
  std::string base_url_variable, shape, reason;
};
struct ContributeResult {
  int rc = -1;
  std::vector<PathEntry> paths;
  std::vector<Named> executable_dirs;
  std::vector<EnvEntry> env;
  std::vector<ConfigDir> config_dirs;
  std::vector<Nested> nested;
  std::vector<Named> hosts;
  std::vector<Credential> credentials;
  std::vector<std::string> errors;

  const PathEntry* path(const std::string& p) const;
  const EnvEntry* env_rule(px_env_action action, const std::string& name) const;
  const ConfigDir* config_dir(const std::string& variable) const;
  // True when a KEEP pattern admits `name` and no STRIP pattern removes it (the host's rule).
  bool keeps(const std::string& name) const;
};

struct CopyRequest {
  std::string from, to, what;
};
struct SignInResult {
  int rc = -1;
  std::vector<CopyRequest> copies;
  std::vector<std::string> instructions;
  std::vector<std::string> errors;
};

struct TranscriptResult {
  int rc = -1;
  std::vector<std::string> sessions;
  std::vector<std::pair<std::string, std::string>> warnings;
  std::vector<std::string> errors;
};

struct RootsResult {
  int rc = -1;
  std::vector<std::string> roots;
  std::vector<std::string> errors;
};

struct CommandLine {
  std::vector<std::string> argv;
  std::string resolved_path;
  std::string resolved_real;
};

struct ContributeArgs {
  px_platform platform = PX_PLATFORM_LINUX;
  std::string user_home = "/home/user";
  std::string run_home = "/home/user";
  std::string run_folder = "/home/user/code/project";
  std::optional<CommandLine> command;
};

// Runs any descriptor through recording sinks.
DetectResult detect(const px_plugin& plugin, const CommandLine& command);
ContributeResult contribute(const px_plugin& plugin, const ContributeArgs& args);
SignInResult carry_sign_in(const px_plugin& plugin, px_platform platform, const std::string& user_home,
                           const std::string& agent_home);
TranscriptResult parse_transcripts(const px_plugin& plugin, const std::vector<std::string>& paths,
                                   int64_t since_ms = 0, int64_t until_ms = 0);
RootsResult transcript_roots(const px_plugin& plugin, const std::string& run_home);

// The descriptor of build/plugins/<name>.so, loaded once per process (never
// unloaded). Fails the current test, and returns nullptr, when it cannot load.
const px_plugin* load_plugin(const std::string& name);

// The four bundled plugins, by name.
const std::vector<std::string>& bundled_plugins();

}  // namespace px_test
