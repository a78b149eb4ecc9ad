// is_within: the lexical test every policy decision, `workspace rm` and the
// quarantine's record folder rely on. A `..` must never pass: a worktree's
// gitdir rewritten to `<repo>/.parallex/workspaces/../../../victim/.git`
// begins with the workspaces folder's parts and names a folder outside it.
#include "common/paths.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace px
