#pragma once
// One plugin, as the host sees it: what it is (read from its descriptor when
// it loaded) and its callbacks, each called in the plugins' own process
// (plugin_process.hpp). What a callback returns is checked here, value by
// value (policy/value_checks.hpp): a bad one is the plugin's error, naming
// the plugin, the callback, the value (escaped) and the rule it broke. What
// needs the run to be judged (a contribution's paths and variables) is
// checked where the policy is composed, with the same validators.
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pluginhost/types.hpp"
#include "policy/compose.hpp"
#include "policy/contribution.hpp"
#include "policy/home_files.hpp"

namespace px::pluginhost {

namespace fs = std::filesystem;

class PluginProcess;

class LoadedPlugin {
 public:
  LoadedPlugin(PluginInfo info, fs::path path, std::size_t index, std::shared_ptr<PluginProcess> process);

  const std::string& name() const { return info_.name; }
  const std::string& version() const { return info_.version; }
  const std::string& description() const { return info_.description; }
  const std::string& harness() const { return info_.harness; }
  const fs::path& path() const { return path_; }
  int abi_major() const { return info_.abi_major; }
  int abi_minor() const { return info_.abi_minor; }
  bool has_transcripts() const { return info_.has_transcripts; }
  bool has_sign_in() const { return info_.has_sign_in; }
  // Why the plugin is left out of this command (it crashed or hung), if it is.
  std::optional<std::string> broken() const;

  Result<std::optional<Detection>> detect(const CommandLine& command) const;
  Result<policy::HarnessContribution> contribute(policy::Platform platform, const fs::path& user_home,
                                                 const fs::path& run_home, const fs::path& run_folder,
                                                 const CommandLine* command) const;
  // Files copied from `user_home` into `agent_home` (absolute, without ".."), and instructions.
  Result<std::vector<SignInStep>> sign_in_steps(policy::Platform platform, const fs::path& user_home,
                                                const fs::path& agent_home) const;
  // `paths` relative to this process's folder are made absolute first. Each
  // session goes to `on_session` as it arrives when there is one (types.hpp):
  // it runs while the plugins' process is held, so it must not call a plugin.
  Result<TranscriptSessions> parse_transcripts(const std::vector<std::string>& paths, std::int64_t since_ms,
                                               std::int64_t until_ms,
                                               const SessionSink& on_session = {}) const;
  // Absolute paths without "..", or the plugin's error. `run_folder` may be empty.
  Result<std::vector<std::string>> transcript_roots(const fs::path& run_home,
                                                    const fs::path& run_folder = {}) const;
  // What the harness runs or trusts in a project (ABI 1.3), relative paths
  // inside it; nothing for older plugins. `.git` and what a profile keeps
  // are refused where the policy is composed.
  Result<policy::ProjectFiles> project_files() const;
  // The harness's files in a home (ABI 1.4): "~/..." paths and key patterns.
  Result<policy::DeclaredHomeFiles> home_files(policy::Platform platform) const;

 private:
  // The callback's answer, or its error in the plugin's name.
  Result<nlohmann::json> call(Stage stage, const std::string& op, nlohmann::json args,
                              const SessionSink& on_part = {}) const;
  Error refused(Stage stage, const char* what, const std::string& value, const std::string& rule) const;

  PluginInfo info_;
  fs::path path_;
  std::size_t index_;
  std::shared_ptr<PluginProcess> process_;
};

}  // namespace px::pluginhost
