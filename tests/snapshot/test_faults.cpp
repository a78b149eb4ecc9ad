// The fault cases of escape-list section (c): kill -9 mid-snapshot and
// mid-rewind, disk full, a link swapped into a parent during the restore.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "helpers.hpp"
#include "snapshot/fault.hpp"
#include "snapshot/snapshot.hpp"

using namespace px::snapshot;
using namespace px::snapshot::test;

namespace {

Store open_store(const fs::path& p) {
  auto s = Store::open(p);
  if (!s) throw std::runtime_error(s.error().message);
  return std::move(s).value();
}

// Runs `op` in a child that SIGKILLs itself the n-th time it reaches `step`.
// Returns true when the child was killed there (false: the step came fewer
// than n times and the operation finished).
bool killed_at(const std::string& step, int n, const std::function<bool()>& op) {
  int status = in_child([&] {
    ::setenv("PARALLEX_TEST_CRASH_AT", (step + ":" + std::to_string(n)).c_str(), 1);
    ::_exit(op() ? 0 : 1);
  });
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
    return true;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "operation failed at " << step << ":" << n;
  return false;
}

void fill_tree(const fs::path& root, const std::string& tag, int files) {
  for (int i = 0; i < files; ++i)
    write_file(
        root / ("d" + std::to_string(i % 3)) / ("f" + std::to_string(i)),
        tag + " content of file " + std::to_string(i) + std::string(static_cast<std::size_t>(i) * 100, 'x'));
}

bool tmp_is_empty(const fs::path& store) {
  return fs::is_empty(store / "tmp");
}

}  // namespace

TEST(Faults, KillDuringSnapshotNeverListsAHalfSnapshot) {
  for (const std::string step :
       {"object-tmp-written", "object-stored", "record-write", "snapshot-committed"}) {
    for (int n = 1; n <= 8; n += 3) {
      TempDir t;
      fill_tree(t.src(), "v1", 6);
      std::size_t listed_before;
      {
        auto store = open_store(t.store());
        TakeOptions o;
        o.source = t.src();
        ASSERT_TRUE(store.take(o));
        listed_before = store.list().value().size();
      }
      fill_tree(t.src(), "v2", 9);
      auto before = capture(t.src());
      bool killed = killed_at(step, n, [&] {
        auto s = Store::open(t.store());
        TakeOptions o;
        o.source = t.src();
        return s && s.value().take(o).has_value();
      });
      auto store = open_store(t.store());  // reopening clears the dead writer's temp files
      EXPECT_TRUE(tmp_is_empty(t.store())) << step << ":" << n;
      auto list = store.list().value();
      std::size_t expect = listed_before + ((!killed || step == "snapshot-committed") ? 1 : 0);
      EXPECT_EQ(list.size(), expect) << step << ":" << n;
      // Every listed snapshot is whole: a fresh snapshot and a rewind to each work.
      TakeOptions o;
      o.source = t.src();
      auto latest = store.take(o);
      ASSERT_TRUE(latest) << latest.error().message;
      RewindOptions r;
      r.source = t.src();
      r.to = list.front().id;
      ASSERT_TRUE(store.rewind(r));
      EXPECT_EQ(read_file(t.src() / "d0/f0").substr(0, 2), "v1");
      r.to = latest.value().id;
      auto back = store.rewind(r);
      ASSERT_TRUE(back) << back.error().message;
      EXPECT_EQ(capture(t.src()), before) << step << ":" << n;
    }
  }
}

TEST(Faults, KillDuringRewindLeavesEachFileWholeAndRerunFinishes) {
  for (const std::string step :
       {"rewind-undo-taken", "restore-tmp-written", "restore-file-done", "restore-removed"}) {
    for (int n = 1; n <= 7; n += 2) {
      TempDir t;
      fill_tree(t.src(), "old", 8);
      auto target_state = capture(t.src());
      std::string target_id;
      {
        auto store = open_store(t.store());
        TakeOptions o;
        o.source = t.src();
        target_id = store.take(o).value().id;
      }
      fs::remove_all(t.src() / "d1");
      fill_tree(t.src(), "new", 5);
      write_file(t.src() / "extra/added", "added after");
      auto current_state = capture(t.src());
      killed_at(step, n, [&] {
        auto s = Store::open(t.store());
        RewindOptions r;
        r.source = t.src();
        r.to = target_id;
        return s && s.value().rewind(r).has_value();
      });
      // Each file is the old or the new version, never torn (temp files aside).
      for (const auto& [path, node] : capture(t.src())) {
        if (path.find(".parallex-rewind-") != std::string::npos || node.type != 'f') continue;
        bool is_old = target_state.count(path) && target_state.at(path).content == node.content;
        bool is_new = current_state.count(path) && current_state.at(path).content == node.content;
        EXPECT_TRUE(is_old || is_new) << path << " is torn after kill at " << step << ":" << n;
      }
      auto store = open_store(t.store());
      RewindOptions r;
      r.source = t.src();
      r.to = target_id;
      auto again = store.rewind(r);
      ASSERT_TRUE(again) << again.error().message;
      auto now = capture(t.src());
      EXPECT_EQ(now, target_state) << step << ":" << n << "\n" << describe_diff(now, target_state);
      // Nothing lost: the state before the first (killed) rewind is still a snapshot.
      bool found = false;
      auto infos = store.list().value();
      for (const auto& info : infos) {
        if (info.kind != "pre-rewind") continue;
        RewindOptions back;
        back.source = t.src();
        back.to = info.id;
        auto res = store.rewind(back);
        ASSERT_TRUE(res) << res.error().message;
        if (capture(t.src()) == current_state) found = true;
      }
      EXPECT_TRUE(found) << "pre-rewind state lost after kill at " << step << ":" << n;
    }
  }
}

namespace {
bool mount_tmpfs(const fs::path& where, const char* size) {
  fs::create_directories(where);
  std::string opts = std::string("size=") + size;
  return ::mount("tmpfs", where.c_str(), "tmpfs", 0, opts.c_str()) == 0;
}
}  // namespace

TEST(Faults, DiskFullDuringSnapshotFailsCleanly) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  TempDir t;
  fs::path mnt = t.path() / "mnt";
  if (!mount_tmpfs(mnt, "2M")) GTEST_SKIP() << "cannot mount tmpfs here";
  write_file(t.src() / "small", "fits");
  auto store = open_store(mnt / "store");
  TakeOptions o;
  o.source = t.src();
  auto first = store.take(o);
  ASSERT_TRUE(first) << first.error().message;
  std::string big(3 << 20, 'b');
  for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i / 4096);
  write_file(t.src() / "big-file", big);
  auto r = store.take(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("big-file"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("No space left"), std::string::npos) << r.error().message;
  EXPECT_TRUE(tmp_is_empty(mnt / "store"));
  auto list = store.list().value();
  ASSERT_EQ(list.size(), 1u);
  // The earlier snapshot is intact and usable.
  fs::remove(t.src() / "big-file");
  write_file(t.src() / "small", "changed");
  RewindOptions rw;
  rw.source = t.src();
  auto back = store.rewind(rw);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(read_file(t.src() / "small"), "fits");
}

TEST(Faults, DiskFullDuringRewindStopsAndKeepsThePreviousState) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  TempDir t;
  fs::path home = t.path() / "mnt";
  if (!mount_tmpfs(home, "2M")) GTEST_SKIP() << "cannot mount tmpfs here";
  std::string a(1200 << 10, 'a'), b(1200 << 10, 'b');
  a[5] = 'A';
  write_file(home / "data", a);
  auto store = open_store(t.store());
  TakeOptions o;
  o.source = home;
  auto snap = store.take(o);
  ASSERT_TRUE(snap);
  write_file(home / "data", b);
  RewindOptions rw;
  rw.source = home;
  auto r = store.rewind(rw);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("data"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("No space left"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("goes back"), std::string::npos) << r.error().message;
  EXPECT_EQ(read_file(home / "data"), b) << "the file being replaced must be untouched";
  for (auto& e : fs::directory_iterator(home))
    EXPECT_EQ(e.path().filename().string().find(".parallex-rewind-"), std::string::npos)
        << "temp left behind";
}

namespace {
void symlink_swap_case(bool force_fallback) {
  TempDir t;
  fs::path outside = t.path() / "outside";
  fs::create_directories(outside);
  write_file(outside / "victim", "must stay");
  write_file(t.src() / "a-first", "1");
  write_file(t.src() / "sub/victim", "from snapshot");
  auto store = open_store(t.store());
  TakeOptions o;
  o.source = t.src();
  ASSERT_TRUE(store.take(o));
  write_file(t.src() / "a-first", "2");
  write_file(t.src() / "sub/victim", "changed");
  // When the first file is in place, swap "sub" for a link to the outside folder.
  int status = in_child([&] {
    if (force_fallback) ::setenv("PARALLEX_TEST_NO_OPENAT2", "1", 1);
    set_fault_hook([&](std::string_view step) {
      if (step != "restore-file-done") return;
      static bool done = false;
      if (done) return;
      done = true;
      fs::remove_all(t.src() / "sub");
      fs::create_symlink(outside, t.src() / "sub");
    });
    auto s = Store::open(t.store());
    RewindOptions rw;
    rw.source = t.src();
    auto r = s.value().rewind(rw);
    if (r) ::_exit(10);
    bool names = r.error().message.find("sub/victim") != std::string::npos &&
                 r.error().message.find("link") != std::string::npos;
    ::_exit(names ? 0 : 11);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "rewind must stop at the link and name the path";
  EXPECT_EQ(read_file(outside / "victim"), "must stay");
  EXPECT_EQ(fs::directory_iterator(outside)->path().filename(), "victim");
  std::size_t n = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(outside)) ++n;
  EXPECT_EQ(n, 1u) << "nothing may be created outside the tree";
}
}  // namespace

TEST(Faults, SymlinkSwappedIntoParentDuringRestoreWithOpenat2) {
  symlink_swap_case(false);
}
TEST(Faults, SymlinkSwappedIntoParentDuringRestorePerComponentFallback) {
  symlink_swap_case(true);
}

TEST(Faults, OnDiskLinkWhereSnapshotHasFileIsReplacedNotFollowed) {
  TempDir t;
  fs::path outside = t.path() / "outside-file";
  write_file(outside, "outside");
  write_file(t.src() / "config", "inside");
  auto store = open_store(t.store());
  TakeOptions o;
  o.source = t.src();
  ASSERT_TRUE(store.take(o));
  fs::remove(t.src() / "config");
  fs::create_symlink(outside, t.src() / "config");
  RewindOptions rw;
  rw.source = t.src();
  auto r = store.rewind(rw);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(fs::is_symlink(t.src() / "config"));
  EXPECT_EQ(read_file(t.src() / "config"), "inside");
  EXPECT_EQ(read_file(outside), "outside");
}
