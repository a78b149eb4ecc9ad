// The Backend seam holds only if nothing above it reaches a backend's own
// files: a command, the run stage or the supervisor that includes
// backend/seal/ works on Linux alone and bypasses what the seam decides
// (docs/architecture.md). Read from the sources, so a new include fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_paths.hpp"

namespace fs = std::filesystem;

namespace {

// Every `#include "backend/<name>/..."` in a file outside host/src/backend.
std::vector<std::string> backend_includes_above_the_seam() {
  const fs::path src = fs::path(PARALLEX_SOURCE_DIR) / "host" / "src";
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto relative = entry.path().lexically_relative(src);
    if (*relative.begin() == "backend") continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (line.rfind("#include", 0) != 0) continue;
      for (const char* backend : {"backend/seal/", "backend/none/", "backend/seatbelt/"})
        if (line.find(std::string("\"") + backend) != std::string::npos)
          found.push_back(relative.string() + ":" + std::to_string(number) + ": " + line);
    }
  }
  return found;
}

TEST(Layering, NothingAboveTheBackendSeamIncludesABackendsOwnFiles) {
  const auto found = backend_includes_above_the_seam();
  std::string listing;
  for (const auto& line : found) listing += line + "\n";
  EXPECT_TRUE(found.empty()) << "include backend/backend.hpp instead:\n" << listing;
}

// The scan itself must see the tree: a wrong root would pass vacuously.
TEST(Layering, TheScanReadsTheHostsSources) {
  const fs::path cli = fs::path(PARALLEX_SOURCE_DIR) / "host" / "src" / "cli";
  ASSERT_TRUE(fs::is_directory(cli)) << cli;
  std::ifstream in(cli / "version_info.cpp");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#include \"backend/backend.hpp\""), std::string::npos);
}

}  // namespace
