#pragma once
// One plugin's shared library, loaded with Boost.DLL and called through its C
// ABI. Every sink copies what the plugin hands over at once; an error the
// plugin reports, or a null where a string belongs, becomes an Error naming
// the plugin and the callback.
//
// Only the plugins' own process (plugin_process.hpp) loads plugins: a crash,
// an abort or a hang in one never reaches the host. What comes back is taken
// as the plugin gave it; the host checks it (loaded_plugin.cpp, the policy's
// validators).
#include <parallex/plugin_abi.h>

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "pluginhost/types.hpp"
#include "policy/contribution.hpp"
#include "policy/home_files.hpp"

namespace px::pluginhost {

namespace fs = std::filesystem;

class PluginLibrary {
 public:
  // Where a plugin's log lines go (attach_host, ABI 1.5): level, text.
  using LogSink = std::function<void(int, const std::string&)>;

  // Loads `file`, checks its ABI and descriptor, and gives it the host's
  // services. Errors name the file.
  static Result<std::unique_ptr<PluginLibrary>> load(const fs::path& file, LogSink log);

  const PluginInfo& info() const { return info_; }

  Result<std::optional<Detection>> detect(const CommandLine& command) const;
  Result<policy::HarnessContribution> contribute(policy::Platform platform, const std::string& user_home,
                                                 const std::string& run_home, const std::string& run_folder,
                                                 const CommandLine* command) const;
  Result<std::vector<SignInStep>> sign_in_steps(policy::Platform platform, const std::string& user_home,
                                                const std::string& agent_home) const;
  // Each session's JSON text goes to `on_session` when there is one (types.hpp).
  Result<TranscriptSessions> parse_transcripts(const std::vector<std::string>& paths, std::int64_t since_ms,
                                               std::int64_t until_ms,
                                               const SessionSink& on_session = {}) const;
  // transcript_roots_in when the plugin has it (ABI 1.5), else transcript_roots.
  Result<std::vector<std::string>> transcript_roots(const std::string& run_home,
                                                    const std::string& run_folder) const;
  // Nothing for plugins older than ABI 1.3 (project files) and 1.4 (home files).
  Result<policy::ProjectFiles> project_files() const;
  Result<policy::DeclaredHomeFiles> home_files(policy::Platform platform) const;

  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

 private:
  PluginLibrary() = default;
  // Whether the descriptor has `field` (a later ABI minor added it at the end).
  bool has(std::size_t end_of_field) const { return descriptor_->struct_size >= end_of_field; }

  boost::dll::shared_library library_;
  const px_plugin* descriptor_ = nullptr;
  PluginInfo info_;
  LogSink log_;
  px_host host_{};
};

}  // namespace px::pluginhost
