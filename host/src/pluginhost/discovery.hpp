#pragma once
// Where plugins are looked for, in order: $PARALLEX_PLUGIN_PATH (':'-separated),
// the build tree's plugins folder (only for the parallex of that build tree),
// the installed plugins (<prefix>/<libdir>/parallex/plugins, found from the
// executable's folder: /usr/lib/<multiarch>/parallex/plugins for
// /usr/bin/parallex), and the user's data dir (<data>/parallex/plugins).
#include <filesystem>
#include <string>
#include <vector>

namespace px::pluginhost {

struct SearchPath {
  std::vector<std::filesystem::path> dirs;
  // An entry of PARALLEX_PLUGIN_PATH that names no folder (a file, nothing):
  // said, since the plugins the user meant to add are then missing.
  std::vector<std::string> problems;
};

SearchPath plugin_search_path();
// The build folder this executable was built in, when it runs from there
// (build/parallex); empty for a copied or installed one.
std::filesystem::path build_tree_of_this_executable();
// Where this executable finds installed plugins (<prefix>/<libdir>/parallex/plugins,
// from its own folder); empty when its own path cannot be read.
std::filesystem::path installed_plugin_dir();
std::vector<std::filesystem::path> plugin_search_dirs();
// The *.so files of `dirs`, in directory order then name order.
std::vector<std::filesystem::path> plugin_files(const std::vector<std::filesystem::path>& dirs);

}  // namespace px::pluginhost
