#pragma once
// Which plugin runs a command: `--harness NAME` when given, else the best claim.
#include <optional>
#include <string>
#include <vector>

#include "pluginhost/plugin_set.hpp"

namespace px::pluginhost {

struct HarnessChoice {
  const LoadedPlugin* plugin = nullptr;  // null: no plugin claims it and none was named
  std::string why;                       // "--harness codex", or the plugin's reason
  int confidence = 0;
  // A plugin that failed to inspect the command (its error; a crash or a
  // hang is among the set's problems()).
  std::vector<std::string> problems;
};

Result<HarnessChoice> choose_harness(const PluginSet& set, const std::optional<std::string>& forced,
                                     const CommandLine* command);

}  // namespace px::pluginhost
