#include "pluginhost/discovery.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include "common/paths.hpp"
#include "common/shown.hpp"

namespace px::pluginhost {

namespace {

fs::path executable_dir() {
  return parallex_executable().parent_path();
}

}  // namespace

fs::path build_tree_of_this_executable() {
  const fs::path exe = executable_dir();
  std::error_code ec;
  return !exe.empty() && fs::equivalent(exe, PX_BUILD_TREE_BIN_DIR, ec) ? fs::path(PX_BUILD_TREE_BIN_DIR)
                                                                        : fs::path();
}

fs::path installed_plugin_dir() {
  const fs::path exe = executable_dir();
  return exe.empty() ? fs::path() : normal_absolute(exe / PX_INSTALLED_PLUGIN_DIR_FROM_BINDIR);
}

SearchPath plugin_search_path() {
  SearchPath out;
  std::vector<fs::path>& dirs = out.dirs;
  auto add = [&](const fs::path& d) {
    if (d.empty()) return;
    fs::path n = normal_absolute(d);
    if (std::find(dirs.begin(), dirs.end(), n) == dirs.end()) dirs.push_back(n);
  };
  if (const char* env = std::getenv("PARALLEX_PLUGIN_PATH"); env && *env) {
    std::stringstream list(env);
    std::string dir;
    while (std::getline(list, dir, ':')) {
      if (dir.empty()) continue;
      std::error_code ec;
      const auto st = fs::status(normal_absolute(dir), ec);
      const std::string fix =
          "; PARALLEX_PLUGIN_PATH lists folders holding plugin files (*.so), separated by ':'";
      if (fs::is_regular_file(st))
        out.problems.push_back("PARALLEX_PLUGIN_PATH names " + shown(dir) +
                               ", which is a file, not a folder" + fix);
      else if (!fs::is_directory(st))
        out.problems.push_back("PARALLEX_PLUGIN_PATH names " + shown(dir) + ", which " +
                               (fs::exists(st) ? "is not a folder" : "does not exist") + fix);
      else
        add(dir);
    }
  }
  if (fs::path exe = executable_dir(); !exe.empty()) {
    // The build tree's plugins, for the executable built beside them only: an
    // installed parallex never looks at a build tree, and never at
    // <bindir>/plugins (/usr/bin/plugins is nobody's plugin folder).
    if (!build_tree_of_this_executable().empty()) add(PX_BUILD_TREE_PLUGIN_DIR);
    // Installed: <prefix>/<libdir>/parallex/plugins, e.g.
    // /usr/lib/x86_64-linux-gnu/parallex/plugins for /usr/bin/parallex.
    add(installed_plugin_dir());
  }
  add(parallex_data_dir() / "plugins");
  return out;
}

std::vector<fs::path> plugin_search_dirs() {
  return plugin_search_path().dirs;
}

std::vector<fs::path> plugin_files(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> files;
  for (const auto& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> here;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".so" && entry.is_regular_file(ec)) here.push_back(entry.path());
    }
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }
  return files;
}

}  // namespace px::pluginhost
