// TempDir: a private scratch folder, removed with all it holds, never through a link.
#include "common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace px {
namespace {

namespace fs = std::filesystem;

TEST(TempDir, PrivateAndRemovedWithWhatItHoldsButNotWhatItLinksTo) {
  auto outside = TempDir::make("px-tempdir-outside-");
  ASSERT_TRUE(outside) << outside.error().message;
  std::ofstream(outside.value().path() / "kept") << "kept\n";
  fs::path made;
  {
    auto dir = TempDir::make("px-tempdir-");
    ASSERT_TRUE(dir) << dir.error().message;
    made = dir.value().path();
    struct stat st {};
    ASSERT_EQ(::stat(made.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::create_directories(made / "a/b/c");
    std::ofstream(made / "a/b/c/file") << "x";
    fs::create_directory_symlink(outside.value().path(), made / "a/link");
  }
  EXPECT_FALSE(fs::exists(made));
  EXPECT_TRUE(fs::exists(outside.value().path() / "kept"));
}

TEST(TempDir, ReleasedIsKeptAndAMissingBaseIsNamed) {
  fs::path kept;
  {
    auto dir = TempDir::make("px-tempdir-");
    ASSERT_TRUE(dir);
    kept = dir.value().release();
  }
  EXPECT_TRUE(fs::is_directory(kept));
  fs::remove_all(kept);
  const auto missing = TempDir::make("/nonexistent-parallex-base", "x-");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent-parallex-base"), std::string::npos);
}

}  // namespace
}  // namespace px
