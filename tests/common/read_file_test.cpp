// What a file named by a person or a repository may be: a regular file of a
// sane size. A FIFO with no writer, a device that never ends and a folder are
// refused at once, by name.
#include "common/read_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace px {
namespace {

namespace fs = std::filesystem;

class ReadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/px-read-file-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReadFile, ReadsARegularFileWhole) {
  std::ofstream(dir_ / "a.yaml") << "key: value\n";
  auto text = read_regular_file(dir_ / "a.yaml");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text.value(), "key: value\n");
}

TEST_F(ReadFile, AFifoWithNoWriterIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto text = read_regular_file(dir_ / "fifo");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(text.error().message.find((dir_ / "fifo").string() + " is a FIFO"), std::string::npos)
      << text.error().message;
}

TEST_F(ReadFile, DevicesFoldersAndProcMemAreNotFiles) {
  for (const char* path : {"/dev/zero", "/dev/null", "/etc"}) {
    auto text = read_regular_file(path);
    ASSERT_FALSE(text) << path;
    EXPECT_EQ(text.error().kind, ErrorKind::invalid_input) << path;
    EXPECT_NE(text.error().message.find("not a regular file"), std::string::npos) << text.error().message;
  }
  // /proc/self/mem is a "regular file" of size 0 that reads as an I/O error:
  // refused, never taken for an empty file.
  auto mem = read_regular_file("/proc/self/mem");
  EXPECT_FALSE(mem);
}

TEST_F(ReadFile, ALargerFileThanTheLimitIsRefused) {
  std::ofstream(dir_ / "big") << std::string(5000, 'x');
  auto text = read_regular_file(dir_ / "big", {.max_bytes = 4096});
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("larger than 4 KiB"), std::string::npos) << text.error().message;
  EXPECT_TRUE(read_regular_file(dir_ / "big", {.max_bytes = 5000}));
}

TEST_F(ReadFile, MissingIsNotFoundAndALinkCanBeRefused) {
  auto missing = read_regular_file(dir_ / "nothing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  std::ofstream(dir_ / "real") << "x";
  fs::create_symlink(dir_ / "real", dir_ / "link");
  EXPECT_TRUE(read_regular_file(dir_ / "link"));
  auto refused = read_regular_file(dir_ / "link", {.follow_links = false});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("symbolic link"), std::string::npos);
}

}  // namespace
}  // namespace px
