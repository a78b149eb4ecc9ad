#pragma once
// All plugins found on the search path, loaded once per command in the
// plugins' own process (plugin_process.hpp). A plugin that fails to load,
// crashes or hangs is recorded with its reason and the others keep working.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pluginhost/loaded_plugin.hpp"

namespace px::pluginhost {

struct LoadFailure {
  fs::path path;
  std::string reason;
};

struct Claim {
  const LoadedPlugin* plugin = nullptr;
  Detection detection;
};

class PluginSet {
 public:
  // Loads every plugin file under `dirs`.
  static PluginSet load(const std::vector<fs::path>& dirs);
  // The search path (discovery.hpp), its problems among the failures.
  static PluginSet load_default();

  const std::vector<std::unique_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  const std::vector<LoadFailure>& failures() const { return failures_; }
  const std::vector<fs::path>& search_dirs() const { return dirs_; }

  // When no plugin was found: a sentence saying so, where this executable
  // looked and what a run goes without (its harness's protections), with the
  // fix. Empty when there are plugins. Said once per run and by `check`.
  std::string none_found() const;

  const LoadedPlugin* find(const std::string& name) const;
  // "--harness NAME" lookup: an unknown name is an error listing the known ones.
  Result<const LoadedPlugin*> require(const std::string& name) const;

  // Every plugin's claim on the command, best first. A plugin that fails while
  // inspecting is skipped and reported through `problems`.
  std::vector<Claim> claims(const CommandLine& command, std::vector<std::string>* problems = nullptr) const;

  // What a command says on stderr about its plugins, one line each: every
  // load failure (a file of another ABI, a PARALLEX_PLUGIN_PATH entry that is
  // no folder) and every plugin that crashed or hung so far in this command.
  std::vector<std::string> problems() const;

 private:
  std::vector<fs::path> dirs_;
  std::shared_ptr<PluginProcess> process_;
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::vector<LoadFailure> failures_;
};

// Fills resolved_path / resolved_real of a command line from $PATH.
CommandLine make_command_line(const std::vector<std::string>& argv, const std::string& path_env);

}  // namespace px::pluginhost
