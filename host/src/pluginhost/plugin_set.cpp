#include "pluginhost/plugin_set.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/paths.hpp"
#include "pluginhost/discovery.hpp"

namespace px::plugins {

PluginSet PluginSet::load(const std::vector<fs::path>& dirs) {
  PluginSet set;
  set.dirs_ = dirs;
  for (const auto& file : plugin_files(dirs)) {
    auto loaded = LoadedPlugin::load(file);
    if (!loaded) {
      spdlog::debug("plugin {} not loaded: {}", file.string(), loaded.error().message);
      set.failures_.push_back({file, loaded.error().message});
      continue;
    }
    auto plugin = std::move(loaded).value();
    if (const LoadedPlugin* other = set.find(plugin->name())) {
      set.failures_.push_back({file, file.string() + ": a plugin named '" + plugin->name() +
                                         "' is already loaded from " + other->path().string() +
                                         "; remove one of the two"});
      continue;
    }
    spdlog::debug("plugin {} {} loaded from {}", plugin->name(), plugin->version(), file.string());
    set.plugins_.push_back(std::move(plugin));
  }
  return set;
}

PluginSet PluginSet::load_default() { return load(plugin_search_dirs()); }

std::string PluginSet::none_found() const {
  if (!plugins_.empty()) return {};
  std::string where;
  for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d.string();
  std::string text =
      "no harness plugin was found (looked in " + (where.empty() ? std::string("no folder") : where) +
      "): runs get none of a harness's protections (its state folders, its keys brokered, its own "
      "sandbox turned off); install the plugins beside this executable, or name their folder in "
      "PARALLEX_PLUGIN_PATH (`parallex plugins` lists what is found)";
  if (!failures_.empty())
    text += "; " + std::to_string(failures_.size()) + " file(s) failed to load: " + failures_.front().reason;
  return text;
}

const LoadedPlugin* PluginSet::find(const std::string& name) const {
  for (const auto& p : plugins_)
    if (p->name() == name) return p.get();
  return nullptr;
}

Result<const LoadedPlugin*> PluginSet::require(const std::string& name) const {
  if (const auto* p = find(name)) return p;
  std::string known;
  for (const auto& p : plugins_) known += (known.empty() ? "" : ", ") + p->name();
  if (known.empty()) known = "none: no plugin was found (see `parallex plugins`)";
  return Error::not_found("unknown harness '" + name + "'; known harnesses: " + known);
}

std::vector<Claim> PluginSet::claims(const CommandLine& command, std::vector<std::string>* problems) const {
  std::vector<Claim> out;
  for (const auto& p : plugins_) {
    auto found = p->detect(command);
    if (!found) {
      if (problems) problems->push_back(found.error().message);
      continue;
    }
    if (found.value() && found.value()->confidence > 0) out.push_back({p.get(), *found.value()});
  }
  // Highest confidence first; on a tie the name decides, so the choice is stable.
  std::stable_sort(out.begin(), out.end(), [](const Claim& a, const Claim& b) {
    if (a.detection.confidence != b.detection.confidence) return a.detection.confidence > b.detection.confidence;
    return a.plugin->name() < b.plugin->name();
  });
  return out;
}

CommandLine make_command_line(const std::vector<std::string>& argv, const std::string& path_env) {
  CommandLine c;
  c.argv = argv;
  if (argv.empty()) return c;
  if (auto found = find_executable(argv[0], path_env)) {
    c.resolved_path = found->string();
    std::error_code ec;
    fs::path real = fs::canonical(*found, ec);
    c.resolved_real = ec ? c.resolved_path : real.string();
  }
  return c;
}

}  // namespace px::plugins
