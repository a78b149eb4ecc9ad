// Decoy credentials: planted where the policy lets a run read them, and an
// open of one during a run is caught, with the process where the kernel says.
#include "supervisor/decoys.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <thread>

#include "spawn.hpp"

namespace px::supervisor {
namespace {

class DecoyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home = fs::temp_directory_path() / ("px-decoy-" + std::to_string(::getpid()));
    fs::create_directories(home);
  }
  void TearDown() override { fs::remove_all(home); }
  fs::path home;
};

using px::test::slurp;

TEST_F(DecoyTest, PlantsLookAlikesOutsideTheDeniedSecretPaths) {
  auto planted = plant_decoys(home);
  ASSERT_TRUE(planted) << planted.error().message;
  EXPECT_EQ(planted.value().size(), decoy_paths(home).size());
  // The default profile denies these under the agent's home: a decoy there could never be opened.
  for (const char* denied : {".ssh", ".aws", ".config/gh/hosts.yml", ".git-credentials", ".netrc"})
    for (const auto& p : planted.value()) EXPECT_NE(p, home / denied) << p;
  for (const auto& p : planted.value()) {
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << p;
    EXPECT_FALSE(p.string().rfind((home / ".ssh/").string(), 0) == 0);
    EXPECT_FALSE(p.string().rfind((home / ".aws/").string(), 0) == 0);
  }
  EXPECT_TRUE(std::regex_search(slurp(home / ".config/aws/credentials"), std::regex("AKIA[A-Z2-7]{16}")));
  // Planting again leaves existing files alone.
  const auto before = slurp(home / ".config/aws/credentials");
  auto again = plant_decoys(home);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again.value().empty());
  EXPECT_EQ(slurp(home / ".config/aws/credentials"), before);
}

TEST_F(DecoyTest, FlagsAnOpenWithTheProcessWhereKnown) {
  ASSERT_TRUE(plant_decoys(home));
  auto watch = DecoyWatch::start(home);
  ASSERT_TRUE(watch) << watch.error().message;
  EXPECT_EQ(watch.value()->watched(), decoy_paths(home).size());
  const fs::path target = home / ".config/aws/credentials";
  const pid_t pid = ::fork();
  if (pid == 0) {
    (void)!::freopen("/dev/null", "w", stdout);
    ::execl("/bin/cat", "cat", target.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto hits = watch.value()->stop();
  ASSERT_FALSE(hits.empty()) << "no hit via " << watch.value()->method();
  bool found = false;
  for (const auto& h : hits) {
    if (h.path != target || h.event != "open") continue;
    found = true;
    if (watch.value()->method() == "fanotify") {
      EXPECT_EQ(h.pid, pid);
    }
  }
  EXPECT_TRUE(found) << to_json(hits.front()).dump();
}

TEST_F(DecoyTest, InotifyFallbackSeesOpensAndMoves) {
  // The unprivileged path, exercised whatever our privileges: no pid, but the open.
  ASSERT_TRUE(plant_decoys(home));
  auto watch = DecoyWatch::start(home, {}, false);
  ASSERT_TRUE(watch);
  EXPECT_EQ(watch.value()->method(), "inotify");
  { std::ifstream in(home / ".ssh-backup/id_rsa"); }
  fs::rename(home / ".git-credentials.old", home / "moved");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto hits = watch.value()->stop();
  bool open_seen = false, moved_seen = false;
  for (const auto& h : hits) {
    if (h.path == home / ".ssh-backup/id_rsa" && h.event == "open") open_seen = true;
    if (h.path == home / ".git-credentials.old" && h.event == "moved") moved_seen = true;
    EXPECT_EQ(h.pid, 0);
  }
  EXPECT_TRUE(open_seen);
  EXPECT_TRUE(moved_seen);
}

}  // namespace
}  // namespace px::supervisor
