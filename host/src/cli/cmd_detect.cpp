// `parallex detect [--json] -- CMD...`: which plugin claims a command, and why.
#include <cstdlib>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "pluginhost/plugin_set.hpp"

namespace px::cli {
namespace {

struct DetectOptions {
  bool json = false;
  std::vector<std::string> command;
};

int run(const DetectOptions& o) {
  if (o.command.empty())
    return report_error(
        Error::invalid("give the command to inspect after --, e.g. parallex detect -- claude"));
  const auto set = pluginhost::PluginSet::load_default();
  const char* path_env = std::getenv("PATH");
  const auto command = pluginhost::make_command_line(o.command, path_env ? path_env : "");
  std::vector<std::string> problems;
  const auto claims = set.claims(command, &problems);
  // Which plugins failed to load, crashed or hung: a claim missing for that
  // reason is said, never taken for `generic` silently.
  for (auto& p : set.problems()) problems.push_back(std::move(p));
  // No plugin at all: "no plugin claims this command" alone reads as if one could.
  if (std::string none = set.none_found(); !none.empty()) problems.push_back(std::move(none));
  if (o.json) {
    nlohmann::json out{{"command", o.command},
                       {"resolved_path", command.resolved_path},
                       {"resolved_real", command.resolved_real},
                       {"claims", nlohmann::json::array()},
                       {"problems", problems}};
    for (const auto& c : claims)
      out["claims"].push_back({{"plugin", c.plugin->name()},
                               {"confidence", c.detection.confidence},
                               {"reason", c.detection.reason}});
    out["harness"] = claims.empty() ? nlohmann::json(nullptr) : nlohmann::json(claims.front().plugin->name());
    print_json(out);
  } else if (claims.empty()) {
    std::printf("no plugin claims this command; it would run with the profile alone\n");
  } else {
    std::printf("%s (confidence %d): %s\n", claims.front().plugin->name().c_str(),
                claims.front().detection.confidence, claims.front().detection.reason.c_str());
    for (std::size_t i = 1; i < claims.size(); ++i)
      std::printf("  also: %s (confidence %d): %s\n", claims[i].plugin->name().c_str(),
                  claims[i].detection.confidence, claims[i].detection.reason.c_str());
  }
  for (const auto& p : problems) say(p);
  return 0;
}

Action setup_detect(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<DetectOptions>();
  app.add_flag("--json", o->json, "Print JSON");
  app.add_option("command", o->command, "The command line, after --")->required();
  return [o] { return run(*o); };
}

}  // namespace

PARALLEX_COMMAND("detect", "Say which harness plugin claims a command line, and why", 11, setup_detect);

}  // namespace px::cli
