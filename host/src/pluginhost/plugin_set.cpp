#include "pluginhost/plugin_set.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/paths.hpp"
#include "common/shown.hpp"
#include "pluginhost/discovery.hpp"
#include "pluginhost/plugin_process.hpp"
#include "policy/value_checks.hpp"

namespace px::pluginhost {

namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

}  // namespace

PluginSet PluginSet::load(const std::vector<fs::path>& dirs) {
  PluginSet set;
  set.dirs_ = dirs;
  set.process_ = std::make_shared<PluginProcess>();
  std::size_t index = 0;
  for (const auto& file : plugin_files(dirs)) {
    auto loaded = set.process_->load(index, file);
    if (!loaded) {
      spdlog::debug("plugin {} not loaded: {}", file.string(), loaded.error().message);
      set.failures_.push_back({file, loaded.error().message});
      continue;
    }
    // Each loaded library keeps its index, even one refused below: the
    // plugins' process holds it (and what it gave the plugin) until it ends.
    const std::size_t loaded_as = index++;
    PluginInfo info = std::move(loaded).value();
    if (!valid_name(info.name)) {
      set.failures_.push_back({file, file.string() + ": its name '" + shown(info.name.substr(0, 64)) +
                                         "' is missing or invalid (use lowercase letters, digits and '-')"});
      continue;
    }
    for (std::string* text : {&info.version, &info.description, &info.harness})
      if (!policy::check_text(*text).empty()) *text = shown(*text);
    if (const LoadedPlugin* other = set.find(info.name)) {
      set.failures_.push_back({file, file.string() + ": a plugin named '" + info.name +
                                         "' is already loaded from " + other->path().string() +
                                         "; remove one of the two"});
      continue;
    }
    spdlog::debug("plugin {} {} loaded from {}", info.name, info.version, file.string());
    set.plugins_.push_back(std::make_unique<LoadedPlugin>(std::move(info), file, loaded_as, set.process_));
  }
  return set;
}

PluginSet PluginSet::load_default() {
  SearchPath path = plugin_search_path();
  PluginSet set = load(path.dirs);
  for (auto& problem : path.problems)
    set.failures_.insert(set.failures_.begin(), {fs::path(), std::move(problem)});
  return set;
}

std::vector<std::string> PluginSet::problems() const {
  std::vector<std::string> out;
  for (const auto& f : failures_) out.push_back(f.reason);
  for (const auto& p : plugins_)
    if (auto why = p->broken()) out.push_back(*why);
  return out;
}

std::string PluginSet::none_found() const {
  if (!plugins_.empty()) return {};
  std::string where;
  for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d.string();
  // The fix names the folder this executable looks in (not "beside" it, which
  // is no folder it looks in).
  const fs::path installed = installed_plugin_dir();
  std::string text =
      "no harness plugin was found (looked in " + (where.empty() ? std::string("no folder") : where) +
      "): runs get none of a harness's protections (its state folders, its keys brokered, its own "
      "sandbox turned off); " +
      (installed.empty()
           ? std::string("name the plugins' folder in PARALLEX_PLUGIN_PATH")
           : "put the plugin files (the *.so of a build's plugins/ folder) in " + installed.string() +
                 ", where this executable looks for them, or name their folder in "
                 "PARALLEX_PLUGIN_PATH") +
      " (`parallex plugins` lists what is found)";
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
    if (p->broken()) continue;  // said once, by problems()
    auto found = p->detect(command);
    if (!found) {
      // A crash or a hang: problems() says it; an error the plugin gave, here.
      if (problems && !p->broken()) problems->push_back(found.error().message);
      continue;
    }
    if (found.value() && found.value()->confidence > 0) out.push_back({p.get(), *found.value()});
  }
  // Highest confidence first; on a tie the name decides, so the choice is stable.
  std::stable_sort(out.begin(), out.end(), [](const Claim& a, const Claim& b) {
    if (a.detection.confidence != b.detection.confidence)
      return a.detection.confidence > b.detection.confidence;
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

}  // namespace px::pluginhost
