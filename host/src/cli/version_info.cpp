#include "cli/version_info.hpp"

#include "backend/linux/landlock.hpp"
#include "parallex/plugin_abi.h"

namespace px::cli {

std::string version_text() {
  return std::string("parallex " PARALLEX_VERSION "\n") + "commit " + git_commit() + "\n" + "plugin ABI " +
         std::to_string(PX_PLUGIN_ABI_MAJOR) + "." + std::to_string(PX_PLUGIN_ABI_MINOR) + "\n" +
         "Landlock ABI " + std::to_string(seal::landlock::kHighestAbi) +
         " (the highest this build uses; `parallex check` says what this kernel offers)\n";
}

}  // namespace px::cli
