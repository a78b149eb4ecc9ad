// Parallex's state folder on a filesystem that fills (a 1 MiB tmpfs as
// XDG_STATE_HOME): every run either ends with its outcome recorded, or is
// refused before its command starts, saying why and what to do; no record
// folder is left without its record; no run ends before it started. A run
// during which the filesystem fills still records how it ended.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "spawn.hpp"
#include "test_paths.hpp"
#include "wait.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using px::test::wait_until;

using px::test::slurp;

class StateFull : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs as the state folder needs root";
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "state-full-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = tmpl;
    for (const char* d : {"state", "home", "runtime", "work"}) fs::create_directories(root_ / d);
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    ASSERT_EQ(::mount("tmpfs", (root_ / "state").c_str(), "tmpfs", 0, "size=1m,mode=0700"), 0)
        << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2((root_ / "state").c_str(), MNT_DETACH);
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  fs::path runs() const { return root_ / "state" / "parallex" / "runs"; }
  std::string env() const {
    return "env -u PARALLEX_HOME HOME=" + (root_ / "home").string() +
           " XDG_STATE_HOME=" + (root_ / "state").string() +
           " XDG_RUNTIME_DIR=" + (root_ / "runtime").string() + " ";
  }
  int px(const std::string& args, std::string* err) {
    const std::string cmd = env() + "timeout 60 " + PARALLEX_EXE + " " + args + " >" +
                            (root_ / "out").string() + " 2>" + (root_ / "err").string();
    const int rc = std::system(cmd.c_str());
    *err = slurp(root_ / "err");
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  // Every record folder holds a whole record that says how its run ended.
  void expect_every_record_whole() {
    std::error_code ec;
    for (fs::directory_iterator it(runs(), ec), end; !ec && it != end; it.increment(ec)) {
      const json rec = json::parse(slurp(it->path() / "run.json"), nullptr, false);
      ASSERT_TRUE(rec.is_object()) << "a record folder without a whole record: " << it->path();
      EXPECT_TRUE(rec["ended_at"].is_string()) << it->path();
      EXPECT_GE(rec.value("ended_at", ""), rec.value("started_at", "~")) << it->path();
      EXPECT_FALSE(fs::exists(it->path() / ".reserve")) << it->path();
    }
  }

  fs::path root_;
  bool mounted_ = false;
};

TEST_F(StateFull, EveryRunHasItsOutcomeOrIsRefusedBeforeItStarts) {
  int refused = 0, ran = 0;
  for (int i = 0; i < 60 && refused < 3; ++i) {
    std::string err;
    const fs::path marker = root_ / "work" / ("ran" + std::to_string(i));
    const int rc = px(
        "run --in " + (root_ / "work").string() + " -- sh -c 'touch " + marker.string() + "; exit 7'", &err);
    if (rc == 7) {
      ++ran;
      EXPECT_TRUE(fs::exists(marker));
      continue;
    }
    ++refused;
    EXPECT_EQ(rc, 125) << err;
    EXPECT_FALSE(fs::exists(marker)) << "refused, but its command ran: " << err;
    EXPECT_NE(err.find("is full"), std::string::npos) << err;
    EXPECT_NE(err.find("XDG_STATE_HOME"), std::string::npos) << err;
    EXPECT_EQ(err.find("No space left on device\nparallex: write"), std::string::npos)
        << "said twice: " << err;
  }
  EXPECT_GT(ran, 3);
  EXPECT_EQ(refused, 3) << "the filesystem never filled";
  expect_every_record_whole();
  // Every run that ran has its exit code.
  std::error_code ec;
  int recorded = 0;
  for (fs::directory_iterator it(runs(), ec), end; !ec && it != end; it.increment(ec)) {
    const json rec = json::parse(slurp(it->path() / "run.json"));
    EXPECT_EQ(rec.value("exit_code", -1), 7) << rec.dump(2);
    ++recorded;
  }
  EXPECT_EQ(recorded, ran);
}

TEST_F(StateFull, ARunDuringWhichTheFilesystemFillsKeepsItsOutcome) {
  const fs::path go = root_ / "work" / "go";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string cmd = env() + PARALLEX_EXE + " run --in " + (root_ / "work").string() +
                            " -- sh -c 'touch started; while [ ! -e " + go.string() +
                            " ]; do sleep 0.05; done; exit 3' >" + (root_ / "run.out").string() + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    ::_exit(127);
  }
  // The command runs (its record's room is reserved by then) before the disk fills.
  ASSERT_TRUE(wait_until([&] { return fs::exists(root_ / "work" / "started"); }, 20000))
      << slurp(root_ / "run.out");
  // Something else fills the state folder's filesystem while the run goes on.
  (void)std::system(
      ("dd if=/dev/zero of=" + (root_ / "state" / "filler").string() + " bs=4k 2>/dev/null").c_str());
  std::ofstream(go) << "";
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 3) << slurp(root_ / "run.out");
  fs::remove(root_ / "state" / "filler");
  expect_every_record_whole();
  std::error_code ec;
  for (fs::directory_iterator it(runs(), ec), end; !ec && it != end; it.increment(ec)) {
    const json rec = json::parse(slurp(it->path() / "run.json"));
    EXPECT_EQ(rec.value("status", ""), "exited");
    EXPECT_EQ(rec.value("exit_code", -1), 3);
  }
}

}  // namespace
