#pragma once
// Which plugin runs a command: `--harness NAME` when given, else the best claim.
#include <optional>
#include <string>

#include "pluginhost/plugin_set.hpp"

namespace px::plugins {

struct HarnessChoice {
  const LoadedPlugin* plugin = nullptr;  // null: no plugin claims it and none was named
  std::string why;                       // "--harness codex", or the plugin's reason
  int confidence = 0;
};

Result<HarnessChoice> choose_harness(const PluginSet& set, const std::optional<std::string>& forced,
                                     const CommandLine* command);

}  // namespace px::plugins
