#pragma once
// `parallex plugins --check`: each file loaded on its own in the plugins'
// process (plugin_process.hpp) and each callback called once with harmless
// input; a crash, a hang or a bad answer is reported by plugin and callback.
#include <filesystem>
#include <string>

namespace px::pluginhost {

struct CheckOutcome {
  std::filesystem::path path;
  bool ok = false;
  std::string detail;  // "ok", the load error, or "plugin NAME crashed in detect (signal 11, SIGSEGV)"
};

CheckOutcome check_in_child(const std::filesystem::path& file);

}  // namespace px::pluginhost
