#include "pluginhost/plugin_check.hpp"

#include <memory>

#include "pluginhost/loaded_plugin.hpp"
#include "pluginhost/plugin_process.hpp"

namespace px::pluginhost {

CheckOutcome check_in_child(const std::filesystem::path& file) {
  CheckOutcome out{file, false, ""};
  auto process = std::make_shared<PluginProcess>();
  auto info = process->load(0, file);
  if (!info) {
    out.detail = info.error().message;
    return out;
  }
  const LoadedPlugin plugin(info.value(), file, 0, process);
  // Each callback once, with harmless input.
  const CommandLine cmd{{"parallex-plugin-check", "--version"}, "", ""};
  Status checked = ok();
  if (auto d = plugin.detect(cmd); !d) checked = d.error();
  if (checked) {
    auto c = plugin.contribute(policy::Platform::linux_host, "/nonexistent/home", "/nonexistent/home",
                               "/nonexistent/run", &cmd);
    if (!c) checked = c.error();
  }
  if (checked) {
    if (auto f = plugin.project_files(); !f) checked = f.error();
  }
  if (checked) {
    if (auto f = plugin.home_files(policy::Platform::linux_host); !f) checked = f.error();
  }
  if (checked && plugin.has_transcripts()) {
    if (auto r = plugin.transcript_roots("/nonexistent/home", "/nonexistent/run"); !r) checked = r.error();
  }
  if (!checked) {
    out.detail = checked.error().message;
    return out;
  }
  out.ok = true;
  out.detail = "ok";
  return out;
}

}  // namespace px::pluginhost
