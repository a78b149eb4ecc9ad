// A new run's record folder is its own: made exclusively, an id whose folder
// exists already (another run drew it in the same second) drawn again.
#include "run/record_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace px::run {
namespace {

namespace fs = std::filesystem;

class RecordDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "px-record-dir-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  // The ids drawn, in order, and how many draws were made.
  std::function<std::string()> draws(std::vector<std::string> ids) {
    return [this, ids] { return ids.at(drawn_++ % ids.size()); };
  }
  fs::path root_;
  std::size_t drawn_ = 0;
};

TEST_F(RecordDir, MakesTheFolderAndItsParentsOwnerOnly) {
  const fs::path runs = root_ / "data" / "runs";
  auto claimed = claim_record_dir(runs, draws({"20261206-014500-0001"}));
  ASSERT_TRUE(claimed) << claimed.error().message;
  EXPECT_EQ(claimed.value().id, "20261206-014500-0001");
  EXPECT_EQ(claimed.value().dir, runs / "20261206-014500-0001");
  struct stat st {};
  ASSERT_EQ(::stat(claimed.value().dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(fs::is_empty(claimed.value().dir));
}

// Another run's folder, with its record in it, under the id drawn first: not
// reused, not touched; the next id is.
TEST_F(RecordDir, AnIdWhoseFolderExistsIsDrawnAgain) {
  const fs::path runs = root_ / "runs";
  fs::create_directories(runs / "20261206-014500-beef");
  std::ofstream(runs / "20261206-014500-beef" / "run.json") << "{\"id\": \"the other run\"}\n";
  auto claimed = claim_record_dir(runs, draws({"20261206-014500-beef", "20261206-014500-f00d"}));
  ASSERT_TRUE(claimed) << claimed.error().message;
  EXPECT_EQ(claimed.value().id, "20261206-014500-f00d");
  EXPECT_EQ(claimed.value().dir, runs / "20261206-014500-f00d");
  EXPECT_EQ(drawn_, 2u);
  EXPECT_TRUE(fs::is_empty(claimed.value().dir));
  std::ifstream other(runs / "20261206-014500-beef" / "run.json");
  std::string text((std::istreambuf_iterator<char>(other)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"id\": \"the other run\"}\n");
}

// Two claims that draw the same id get two folders.
TEST_F(RecordDir, TwoRunsDrawingOneIdGetTwoFolders) {
  const fs::path runs = root_ / "runs";
  auto first = claim_record_dir(runs, draws({"20261206-014500-0a0a", "20261206-014500-0b0b"}));
  drawn_ = 0;
  auto second = claim_record_dir(runs, draws({"20261206-014500-0a0a", "20261206-014500-0b0b"}));
  ASSERT_TRUE(first && second);
  EXPECT_NE(first.value().dir, second.value().dir);
  EXPECT_EQ(second.value().id, "20261206-014500-0b0b");
}

// A name taken by a file, not a folder, is taken all the same.
TEST_F(RecordDir, AFileUnderTheIdIsNotAFolderOfOurs) {
  const fs::path runs = root_ / "runs";
  fs::create_directories(runs);
  std::ofstream(runs / "20261206-014500-c0de") << "not a record\n";
  auto claimed = claim_record_dir(runs, draws({"20261206-014500-c0de", "20261206-014500-d00d"}));
  ASSERT_TRUE(claimed) << claimed.error().message;
  EXPECT_EQ(claimed.value().id, "20261206-014500-d00d");
}

// Every id drawn taken: it gives up, saying so, rather than loop.
TEST_F(RecordDir, GivesUpWhenEveryDrawIsTaken) {
  const fs::path runs = root_ / "runs";
  fs::create_directories(runs / "20261206-014500-aaaa");
  auto claimed = claim_record_dir(runs, draws({"20261206-014500-aaaa"}));
  ASSERT_FALSE(claimed);
  EXPECT_NE(claimed.error().message.find("no free run id"), std::string::npos) << claimed.error().message;
  EXPECT_GT(drawn_, 1u);
}

// A folder of records that cannot be made is an error naming it.
TEST_F(RecordDir, ARunsFolderThatCannotBeMadeIsAnError) {
  std::ofstream(root_ / "file") << "x";
  auto claimed = claim_record_dir(root_ / "file" / "runs", draws({"20261206-014500-0001"}));
  ASSERT_FALSE(claimed);
  EXPECT_NE(claimed.error().message.find((root_ / "file" / "runs").string()), std::string::npos)
      << claimed.error().message;
}

}  // namespace
}  // namespace px::run
