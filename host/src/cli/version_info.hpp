#pragma once
// What `parallex --version` says: the version, the git commit it was built
// from, the plugin ABI it loads and the highest Landlock ABI it uses.
#include <string>

namespace px::cli {

// Written at build time (cmake/WriteVersionInfo.cmake): `git describe` of the source tree.
const char* git_commit();
std::string version_text();

}  // namespace px::cli
