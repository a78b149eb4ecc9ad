#include "pluginhost/detection.hpp"

#include <spdlog/spdlog.h>

namespace px::plugins {

Result<HarnessChoice> choose_harness(const PluginSet& set, const std::optional<std::string>& forced,
                                     const CommandLine* command) {
  if (forced) {
    PX_TRY_ASSIGN(auto plugin, set.require(*forced));
    return HarnessChoice{plugin, "--harness " + *forced, 100};
  }
  if (!command || command->argv.empty()) return HarnessChoice{};
  std::vector<std::string> problems;
  auto claims = set.claims(*command, &problems);
  for (const auto& p : problems) spdlog::warn("{}", p);
  if (claims.empty()) return HarnessChoice{};
  return HarnessChoice{claims.front().plugin, claims.front().detection.reason, claims.front().detection.confidence};
}

}  // namespace px::plugins
