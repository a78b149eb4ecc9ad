#pragma once
// Where the misbehaving plugins (bad_plugins/, one folder each) are built.
#include <filesystem>
#include <string>

#include "test_paths.hpp"

namespace px::test {

inline std::filesystem::path bad(const std::string& name) {
  return std::filesystem::path(PARALLEX_BAD_PLUGIN_DIR) / name;
}

}  // namespace px::test
