#include "cli/version_info.hpp"

#include "backend/backend.hpp"
#include "parallex/plugin_abi.h"

namespace px::cli {

std::string version_text() {
  std::string text = std::string("parallex " PARALLEX_VERSION "\n") + "commit " + git_commit() + "\n" +
                     "plugin ABI " + std::to_string(PX_PLUGIN_ABI_MAJOR) + "." +
                     std::to_string(PX_PLUGIN_ABI_MINOR) + "\n";
  if (auto features = backend::sealing_backend().build_features(); !features.empty()) text += features + "\n";
  return text;
}

}  // namespace px::cli
