#include "pluginhost/detection.hpp"

namespace px::pluginhost {

Result<HarnessChoice> choose_harness(const PluginSet& set, const std::optional<std::string>& forced,
                                     const CommandLine* command) {
  if (forced) {
    PX_TRY_ASSIGN(auto plugin, set.require(*forced));
    return HarnessChoice{plugin, "--harness " + *forced, 100, {}};
  }
  if (!command || command->argv.empty()) return HarnessChoice{};
  HarnessChoice choice;
  auto claims = set.claims(*command, &choice.problems);
  if (claims.empty()) return choice;
  choice.plugin = claims.front().plugin;
  choice.why = claims.front().detection.reason;
  choice.confidence = claims.front().detection.confidence;
  return choice;
}

}  // namespace px::pluginhost
