#pragma once
// A test's scratch folder at its end: removed when the test passed, kept (and
// its path printed) when it failed, so what the run left can be looked at.
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace px::test {

inline void remove_unless_failed(const std::filesystem::path& root, bool failed) {
  if (root.empty()) return;
  if (failed) {
    std::printf("[ kept ] %s\n", root.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

}  // namespace px::test
