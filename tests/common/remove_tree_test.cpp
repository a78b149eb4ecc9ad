// Removing a run's private dir through descriptors: links are removed, never
// followed; folders nested deeper than the descriptors it holds, unreadable
// folders and names it would use itself are all handled.
#include "common/remove_tree.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/unique_fd.hpp"

namespace px {
namespace {

namespace fs = std::filesystem;

class RemoveTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/px-remove-tree-XXXXXX";
    ASSERT_TRUE(::mkdtemp(templ));
    root_ = templ;
    outside_ = root_ / "outside";
    fs::create_directories(outside_);
    std::ofstream(outside_ / "keep") << "mine";
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  Status remove(const std::string& name) {
    UniqueFd dir(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return remove_tree_at(dir.get(), name);
  }
  fs::path root_, outside_;
};

TEST_F(RemoveTree, RemovesLinksNotWhatTheyName) {
  const fs::path t = root_ / "tree";
  fs::create_directories(t / "a" / "b");
  std::ofstream(t / "a" / "b" / "f") << "x";
  fs::create_directory_symlink(outside_, t / "a" / "to-outside");
  fs::create_symlink(outside_ / "keep", t / "link-to-file");
  ASSERT_TRUE(remove("tree"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(t)));
  EXPECT_TRUE(fs::exists(outside_ / "keep"));
}

TEST_F(RemoveTree, TheTopBeingALinkIsRemovedAsALink) {
  fs::create_directory_symlink(outside_, root_ / "tree");
  ASSERT_TRUE(remove("tree"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "tree")));
  EXPECT_TRUE(fs::exists(outside_ / "keep"));
}

TEST_F(RemoveTree, FoldersNestedThousandsDeepAndUnreadableOnes) {
  // Deeper than PATH_MAX allows naming: made one level at a time through descriptors.
  UniqueFd at(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_EQ(::mkdirat(at.get(), "tree", 0700), 0);
  UniqueFd cur(::openat(at.get(), "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(::mkdirat(cur.get(), "d", 0700), 0);
    if (i % 300 == 0) {
      // A name the removal uses for what it moves up, taken by the run.
      ASSERT_EQ(::mkdirat(cur.get(), ".px-remove-0", 0700), 0);
      const int f = ::openat(cur.get(), "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      ::close(f);
    }
    cur = UniqueFd(::openat(cur.get(), "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(cur);
  }
  ASSERT_EQ(::mkdirat(cur.get(), "locked", 0), 0);
  cur.reset();
  ASSERT_TRUE(remove("tree"));
  EXPECT_FALSE(fs::exists(root_ / "tree"));
}

TEST_F(RemoveTree, AFileOrNothingAtTheName) {
  std::ofstream(root_ / "file") << "x";
  EXPECT_TRUE(remove("file"));
  EXPECT_FALSE(fs::exists(root_ / "file"));
  EXPECT_TRUE(remove("nothing-here"));
}

}  // namespace
}  // namespace px
