// `parallex plugins [--json] [--check]`: the plugins found, and those that failed.
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/shown.hpp"
#include "pluginhost/discovery.hpp"
#include "pluginhost/plugin_check.hpp"
#include "pluginhost/plugin_set.hpp"

namespace px::cli {
namespace {

struct PluginsOptions {
  bool json = false;
  bool check = false;
};

int run(const PluginsOptions& o) {
  const auto path = pluginhost::plugin_search_path();
  const auto& dirs = path.dirs;
  if (o.check) {
    // Each file alone in the plugins' process: a crash there is reported, not suffered.
    nlohmann::json out = nlohmann::json::array();
    int failed = 0;
    for (const auto& problem : path.problems) {
      ++failed;
      out.push_back({{"path", ""}, {"ok", false}, {"detail", problem}});
      if (!o.json) std::printf("FAIL   %s\n", shown(problem).c_str());
    }
    for (const auto& file : pluginhost::plugin_files(dirs)) {
      auto outcome = pluginhost::check_in_child(file);
      if (!outcome.ok) ++failed;
      out.push_back({{"path", file.string()}, {"ok", outcome.ok}, {"detail", outcome.detail}});
      if (!o.json)
        std::printf("%-6s %s: %s\n", outcome.ok ? "ok" : "FAIL", shown(file.string()).c_str(),
                    shown(outcome.detail).c_str());
    }
    if (o.json) print_json(out);
    return failed ? 1 : 0;
  }
  const auto set = pluginhost::PluginSet::load_default();
  if (o.json) {
    nlohmann::json out;
    out["search_path"] = nlohmann::json::array();
    for (const auto& d : set.search_dirs()) out["search_path"].push_back(d.string());
    out["plugins"] = nlohmann::json::array();
    for (const auto& p : set.plugins())
      out["plugins"].push_back(
          {{"name", p->name()},
           {"version", p->version()},
           {"harness", p->harness()},
           {"description", p->description()},
           {"abi", std::to_string(p->abi_major()) + "." + std::to_string(p->abi_minor())},
           {"path", p->path().string()},
           {"transcripts", p->has_transcripts()},
           {"sign_in", p->has_sign_in()}});
    out["failed"] = nlohmann::json::array();
    for (const auto& f : set.failures())
      out["failed"].push_back({{"path", f.path.string()}, {"reason", f.reason}});
    print_json(out);
    return set.failures().empty() ? 0 : 1;
  }
  std::printf("%-14s %-9s %-5s %s\n", "NAME", "VERSION", "ABI", "PATH");
  for (const auto& p : set.plugins())
    std::printf("%-14s %-9s %d.%-3d %s\n", p->name().c_str(), p->version().c_str(), p->abi_major(),
                p->abi_minor(), p->path().string().c_str());
  if (set.plugins().empty()) std::printf("%s\n", shown(set.none_found()).c_str());
  for (const auto& f : set.failures()) std::printf("FAILED %s\n", shown(f.reason).c_str());
  return set.failures().empty() ? 0 : 1;
}

Action setup_plugins(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<PluginsOptions>();
  app.add_flag("--json", o->json, "Print JSON");
  app.add_flag("--check", o->check,
               "Load each plugin alone and call each of its callbacks once, reporting crashes and hangs");
  return [o] { return run(*o); };
}

}  // namespace

PARALLEX_COMMAND("plugins", "List the harness plugins found, and those that failed to load", 10,
                 setup_plugins);

}  // namespace px::cli
