#pragma once
// One plugin loaded with Boost.DLL. Every call into the plugin goes through a
// C sink that copies what the plugin hands over at once; a plugin's failure
// (an error it reports, a null where a string belongs) becomes an Error naming
// the plugin. The library stays loaded as long as this object lives.
#include <parallex/plugin_abi.h>

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/compose.hpp"
#include "policy/contribution.hpp"
#include "policy/home_files.hpp"

namespace px::plugins {

namespace fs = std::filesystem;

struct CommandLine {
  std::vector<std::string> argv;
  std::string resolved_path;
  std::string resolved_real;
};

struct Detection {
  int confidence = 0;
  std::string reason;
};

struct SignInStep {
  enum class Kind { copy_file, instruction } kind = Kind::instruction;
  std::string from, to, text;
};

struct TranscriptSessions {
  std::vector<std::string> sessions;  // JSON objects as the plugin emitted them
  std::vector<std::pair<std::string, std::string>> warnings;  // path, message
};

class LoadedPlugin {
 public:
  // Loads `file`, checks its ABI and descriptor. Errors name the file.
  static Result<std::unique_ptr<LoadedPlugin>> load(const fs::path& file);

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  const std::string& harness() const { return harness_; }
  const fs::path& path() const { return path_; }
  int abi_major() const { return abi_major_; }
  int abi_minor() const { return abi_minor_; }
  bool has_transcripts() const { return descriptor_->parse_transcripts != nullptr; }
  bool has_sign_in() const { return descriptor_->carry_sign_in != nullptr; }

  Result<std::optional<Detection>> detect(const CommandLine& command) const;
  Result<policy::HarnessContribution> contribute(policy::Platform platform, const fs::path& user_home,
                                                 const fs::path& run_home, const fs::path& run_folder,
                                                 const CommandLine* command) const;
  Result<std::vector<SignInStep>> sign_in_steps(policy::Platform platform, const fs::path& user_home,
                                                const fs::path& agent_home) const;
  Result<TranscriptSessions> parse_transcripts(const std::vector<std::string>& paths, std::int64_t since_ms,
                                               std::int64_t until_ms) const;
  Result<std::vector<std::string>> transcript_roots(const fs::path& run_home) const;
  // What the harness runs or trusts in a project (ABI 1.3); nothing for older
  // plugins. A path that is absolute, empty or climbs out with ".." is the
  // plugin's error.
  Result<policy::ProjectFiles> project_files() const;
  // The harness's files in a home (ABI 1.4); nothing for older plugins. A
  // path that is not "~/..." without "..", or a key pattern with an empty
  // part, is the plugin's error.
  Result<policy::DeclaredHomeFiles> home_files(policy::Platform platform) const;

 private:
  LoadedPlugin() = default;

  boost::dll::shared_library library_;
  const px_plugin* descriptor_ = nullptr;
  fs::path path_;
  std::string name_, version_, description_, harness_;
  int abi_major_ = 0, abi_minor_ = 0;
};

}  // namespace px::plugins
