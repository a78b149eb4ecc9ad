// JsonLinesWriter and read_json_lines: the run's logs are written and read
// through these alone.
#include "common/json_lines.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>
#include <vector>

#include "common/temp_dir.hpp"

namespace px {
namespace {

namespace fs = std::filesystem;

// The one scratch folder of the tree (common/temp_dir.hpp).
struct Folder {
  Folder() : dir(TempDir::make("px-jsonl-").value()), path(dir.path()) {}
  TempDir dir;
  fs::path path;
};

TEST(JsonLines, LinesFromManyThreadsNeverInterleaveAndReadBackWhole) {
  Folder dir;
  const fs::path log = dir.path / "log.jsonl";
  auto writer = JsonLinesWriter::open(log, "the test log");
  ASSERT_TRUE(writer) << writer.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i)
        writer.value().append({{"thread", t}, {"i", i}, {"pad", std::string(300, 'x')}});
    });
  for (auto& t : threads) t.join();
  writer.value().append({{"host", std::string("bad\xff utf-8")}});
  std::uint64_t seen = 0;
  const auto read = read_json_lines(log, [&](const nlohmann::json& j) {
    if (j.contains("thread")) ++seen;
    return true;
  });
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(seen, 2000u);
  EXPECT_EQ(read.value().lines, 2001u);
  EXPECT_EQ(read.value().bad, 0u);
}

TEST(JsonLines, BadLinesAreCountedAndAMissingLogSaysSo) {
  Folder dir;
  const fs::path log = dir.path / "log.jsonl";
  std::ofstream(log) << "{\"host\":\"a\"}\n\nnot json\n[1,2]\n{\"other\":1}\n";
  const auto read = read_json_lines(log, [](const nlohmann::json& j) { return j.contains("host"); });
  ASSERT_TRUE(read);
  EXPECT_EQ(read.value().lines, 4u);
  EXPECT_EQ(read.value().bad, 3u);
  const auto missing = read_json_lines(dir.path / "none.jsonl", [](const nlohmann::json&) { return true; });
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
}

TEST(JsonLines, TheWriterNeverFollowsALinkAtTheLogsName) {
  Folder dir;
  const fs::path target = dir.path / "elsewhere";
  std::ofstream(target) << "kept\n";
  fs::create_symlink(target, dir.path / "log.jsonl");
  EXPECT_FALSE(JsonLinesWriter::open(dir.path / "log.jsonl", "the test log"));
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "kept\n");
}

}  // namespace
}  // namespace px
