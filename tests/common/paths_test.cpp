// is_within: the lexical test every policy decision, `workspace rm` and the
// quarantine's record folder rely on. A `..` must never pass: a worktree's
// gitdir rewritten to `<repo>/.parallex/workspaces/../../../victim/.git`
// begins with the workspaces folder's parts and names a folder outside it.
#include "common/paths.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace px {
namespace {

TEST(IsWithin, APathIsWithinItselfAndItsAncestorsOnPartBounds) {
  EXPECT_TRUE(is_within("/repo/.parallex/workspaces/ws", "/repo/.parallex/workspaces"));
  EXPECT_TRUE(is_within("/repo/.parallex/workspaces", "/repo/.parallex/workspaces"));
  EXPECT_TRUE(is_within("/repo/a", "/"));
  EXPECT_TRUE(is_within("/repo/a/", "/repo/a"));
  EXPECT_TRUE(is_within("/repo/a", "/repo/a/"));
  EXPECT_TRUE(is_within("/repo/./a//b", "/repo/a"));
  EXPECT_FALSE(is_within("/repo/ab", "/repo/a")) << "a prefix of a name is not a parent";
  EXPECT_FALSE(is_within("/repo", "/repo/a"));
  EXPECT_FALSE(is_within("repo/a", "/repo")) << "relative against absolute";
}

TEST(IsWithin, AStepUpNeverPasses) {
  EXPECT_FALSE(is_within("/repo/.parallex/workspaces/../../../victim/.git", "/repo/.parallex/workspaces"));
  EXPECT_FALSE(is_within("/repo/.parallex/workspaces/ws/..", "/repo/.parallex/workspaces"))
      << "after a link, ws/.. is not the workspaces folder";
  EXPECT_FALSE(is_within("/repo/a/../a/b", "/repo/a"));
  EXPECT_FALSE(is_within("/repo/a/b", "/repo/x/../a")) << "a step up in the root too";
  EXPECT_FALSE(is_within("../x", ""));
}

// A path's parts as std::filesystem iterates them, and whether one is "..":
// the reading is_within() must agree with, part by part.
struct FsParts {
  std::vector<std::string> parts;
  bool up = false;
  explicit FsParts(const fs::path& p) {
    for (const auto& part : p) {
      if (part == "..") up = true;
      // libstdc++ names the root of the bare path "//" "//" (of "//a", "/"):
      // it is the root all the same.
      if (!part.empty() && part != ".") parts.push_back(part == "//" ? "/" : part.string());
    }
  }
  bool within(const FsParts& root) const {
    return !up && !root.up && parts.size() >= root.parts.size() &&
           std::equal(root.parts.begin(), root.parts.end(), parts.begin());
  }
};

TEST(IsWithin, AgreesWithTheFilesystemLibrarysPartsOnEveryShortPath) {
  const std::vector<std::string> pieces{"", ".", "..", "a", "ab"};
  std::vector<fs::path> paths{"", "/", "//"};
  for (const char* lead : {"", "/", "//"})
    for (const auto& x : pieces)
      for (const auto& y : pieces) {
        paths.emplace_back(lead + x + "/" + y);
        paths.emplace_back(lead + x + "/" + y + "/");
        if (*lead != '/' || lead[1] == 0)
          for (const auto& z : pieces) paths.emplace_back(lead + x + "/" + y + "/" + z);
      }
  std::vector<FsParts> reference;
  for (const auto& path : paths) reference.emplace_back(path);
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = 0; j < paths.size(); ++j)
      ASSERT_EQ(is_within(paths[i], paths[j]), reference[i].within(reference[j]))
          << "'" << paths[i] << "' in '" << paths[j] << "'";
}

}  // namespace
}  // namespace px
