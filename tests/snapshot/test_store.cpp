// Snapshot and rewind against real trees on disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "helpers.hpp"
#include "snapshot/snapshot.hpp"

using namespace px::snapshot;
using namespace px::snapshot::test;

namespace {

Store open_store(const TempDir& t) {
  auto s = Store::open(t.store());
  if (!s) throw std::runtime_error(s.error().message);
  return std::move(s).value();
}

SnapshotInfo take(Store& store, const fs::path& src, std::vector<std::string> excludes = {},
                  ProgressFn progress = {}) {
  TakeOptions o;
  o.source = src;
  o.excludes = std::move(excludes);
  o.progress = std::move(progress);
  auto r = store.take(o);
  if (!r) throw std::runtime_error(r.error().message);
  return r.value();
}

px::Result<RewindResult> rewind(Store& store, const fs::path& src, std::optional<std::string> to = {},
                                bool dry = false) {
  RewindOptions o;
  o.source = src;
  o.to = std::move(to);
  o.dry_run = dry;
  return store.rewind(o);
}

std::size_t count_objects(const fs::path& store) {
  std::size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(store / "objects"))
    if (e.is_regular_file()) ++n;
  return n;
}

}  // namespace

TEST(Store, RoundTripOfAwkwardTree) {
  TempDir t;
  make_sample_tree(t.src());
  auto before = capture(t.src());
  auto store = open_store(t);
  auto snap = take(store, t.src());
  EXPECT_EQ(snap.files, 10u);
  EXPECT_FALSE(snap.incomplete);

  // Wreck the tree: delete, modify, add, change modes.
  fs::remove_all(t.src() / ".config");
  write_file(t.src() / ".gitconfig", "tampered");
  write_file(t.src() / "new-file", "added by the run");
  fs::remove_all(t.src() / "empty");
  fs::remove(t.src() / "link-to-config");
  fs::create_symlink("/etc/passwd", t.src() / "link-to-config");
  fs::remove(t.src() / std::string("bad-\xff\xfe-name"));
  ::chmod((t.src() / "bin/tool").c_str(), 0600);

  auto r = rewind(store, t.src());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r.value().target_id, snap.id);
  EXPECT_FALSE(r.value().undo_id.empty());
  auto after = capture(t.src());
  EXPECT_EQ(before, after) << describe_diff(before, after);
  EXPECT_EQ(::access((t.src() / "new-file").c_str(), F_OK), -1);
  // Folder times too: a second look finds nothing left to change.
  auto again = rewind(store, t.src(), snap.id, true);
  ASSERT_TRUE(again);
  for (const auto& c : again.value().changes)
    ADD_FAILURE() << "left over: " << to_string(c.kind) << " " << c.path;

  // The rewind is undoable: its pre-rewind snapshot brings the wrecked state back.
  auto undo = rewind(store, t.src(), r.value().undo_id);
  ASSERT_TRUE(undo) << undo.error().message;
  EXPECT_EQ(read_file(t.src() / "new-file"), "added by the run");
  EXPECT_EQ(read_file(t.src() / ".gitconfig"), "tampered");
}

TEST(Store, ModesAndTimesRestoredButNeverSetuid) {
  TempDir t;
  write_file(t.src() / "secret-ish", "x", 0600);
  write_file(t.src() / "suid", "y", 04755);
  ::chmod((t.src() / "suid").c_str(), 04755);
  fs::create_directories(t.src() / "sgid-dir");
  ::chmod((t.src() / "sgid-dir").c_str(), 02770);
  struct timespec ts[2] = {{1000000, 5}, {1000000, 5}};
  ::utimensat(AT_FDCWD, (t.src() / "secret-ish").c_str(), ts, 0);
  auto store = open_store(t);
  take(store, t.src());
  fs::remove_all(t.src());
  fs::create_directories(t.src());
  ASSERT_TRUE(rewind(store, t.src()));
  struct stat st {};
  ASSERT_EQ(::stat((t.src() / "secret-ish").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 5);
  ASSERT_EQ(::stat((t.src() / "suid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(::stat((t.src() / "sgid-dir").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0770u);
}

TEST(Store, DeduplicatesAndUnchangedTreeCostsOneStatWalk) {
  TempDir t;
  make_sample_tree(t.src());
  auto store = open_store(t);
  auto first = take(store, t.src());
  // dup-a and dup-b share one object; +1 for the manifest.
  EXPECT_EQ(count_objects(t.store()), 10u);
  EXPECT_GT(first.new_bytes, 0u);
  ::sleep(1);            // past the racy-timestamp margin of the stat cache
  take(store, t.src());  // this one fills the cache for files hashed too close to the first walk
  std::uint64_t hashed = 0;
  auto second =
      take(store, t.src(), {}, [&](const Progress& p) { hashed = std::max(hashed, p.files_total); });
  EXPECT_EQ(hashed, 0u) << "an unchanged tree must not be re-read";
  EXPECT_EQ(second.new_bytes, 0u);
  EXPECT_EQ(second.tree, first.tree);
  write_file(t.src() / ".gitconfig", "changed");
  std::uint64_t hashed3 = 0;
  auto third =
      take(store, t.src(), {}, [&](const Progress& p) { hashed3 = std::max(hashed3, p.files_total); });
  EXPECT_EQ(hashed3, 1u);
  EXPECT_GT(third.new_bytes, 0u);
  auto list = store.list();
  ASSERT_TRUE(list);
  EXPECT_EQ(list.value().size(), 4u);
}

TEST(Store, ExcludedSecretsAreNeverStoredAndSurviveRewind) {
  TempDir t;
  make_sample_tree(t.src());
  const std::string token = "ghp_THISISTHETOKENVALUE0123456789abcdefXYZ";
  write_file(t.src() / "secrets/token", token, 0600);
  write_file(t.src() / "keys/id_ed25519", "PRIVATE KEY", 0600);
  auto store = open_store(t);
  take(store, t.src(), {"secrets", "keys/"});
  for (auto& e : fs::recursive_directory_iterator(t.store())) {
    if (!e.is_regular_file()) continue;
    std::string content = read_file(e.path());
    EXPECT_EQ(content.find(token), std::string::npos) << e.path();
    EXPECT_EQ(content.find("PRIVATE KEY"), std::string::npos) << e.path();
  }
  const std::string new_token = "ghp_ROTATEDTOKEN0123456789abcdefghijklmn";
  write_file(t.src() / "secrets/token", new_token, 0600);
  auto r = rewind(store, t.src());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read_file(t.src() / "secrets/token"), new_token);
  EXPECT_EQ(read_file(t.src() / "keys/id_ed25519"), "PRIVATE KEY");
}

TEST(Store, DryRunListsChangesAndTouchesNothing) {
  TempDir t;
  make_sample_tree(t.src());
  auto store = open_store(t);
  take(store, t.src());
  write_file(t.src() / ".gitconfig", "tampered");
  write_file(t.src() / "added", "new");
  fs::remove(t.src() / "empty-file");
  auto before = capture(t.src());
  auto r = rewind(store, t.src(), {}, true);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r.value().undo_id.empty());
  std::map<std::string, Change::Kind> kinds;
  for (const auto& c : r.value().changes) kinds[c.path] = c.kind;
  EXPECT_EQ(kinds[".gitconfig"], Change::Kind::update);
  EXPECT_EQ(kinds["added"], Change::Kind::remove);
  EXPECT_EQ(kinds["empty-file"], Change::Kind::create);
  EXPECT_EQ(capture(t.src()), before);
  EXPECT_EQ(store.list().value().size(), 1u);
}

TEST(Store, RefusesWhileBusy) {
  TempDir t;
  write_file(t.src() / "f", "1");
  auto store = open_store(t);
  take(store, t.src());
  write_file(t.src() / "f", "2");
  RewindOptions o;
  o.source = t.src();
  o.is_busy = [] { return true; };
  auto r = store.rewind(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, px::ErrorKind::conflict);
  EXPECT_NE(r.error().message.find("in use"), std::string::npos);
  EXPECT_EQ(read_file(t.src() / "f"), "2");
}

TEST(Store, TamperedObjectIsRefusedBeforeAnythingChanges) {
  TempDir t;
  write_file(t.src() / "a", "original a");
  write_file(t.src() / "b", "original b");
  auto store = open_store(t);
  take(store, t.src());
  write_file(t.src() / "a", "new a");
  write_file(t.src() / "b", "new b");
  // Find b's object and change it.
  for (auto& e : fs::recursive_directory_iterator(t.store() / "objects")) {
    if (e.is_regular_file() && read_file(e.path()) == "original b") write_file(e.path(), "evil b", 0600);
  }
  auto r = rewind(store, t.src());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not match its hash"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("/b"), std::string::npos) << r.error().message;
  EXPECT_EQ(read_file(t.src() / "a"), "new a");
  EXPECT_EQ(read_file(t.src() / "b"), "new b");
}

TEST(Store, FileReplacedByDirectoryAndBack) {
  TempDir t;
  write_file(t.src() / "x", "file x");
  fs::create_directories(t.src() / "y");
  write_file(t.src() / "y/inner", "inner");
  auto store = open_store(t);
  auto s1 = take(store, t.src());
  fs::remove(t.src() / "x");
  write_file(t.src() / "x/now-a-dir", "d");
  fs::remove_all(t.src() / "y");
  write_file(t.src() / "y", "now a file");
  auto s2 = take(store, t.src());
  auto r = rewind(store, t.src(), s1.id);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read_file(t.src() / "x"), "file x");
  EXPECT_EQ(read_file(t.src() / "y/inner"), "inner");
  // Back again: "x" is a non-empty folder now replaced by a file -> moved aside, not deleted.
  r = rewind(store, t.src(), s2.id);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read_file(t.src() / "x/now-a-dir"), "d");
  EXPECT_EQ(read_file(t.src() / "y"), "now a file");
  bool aside = false;
  for (auto& e : fs::directory_iterator(t.src()))
    if (e.path().filename().string().rfind("y.parallex-aside-", 0) == 0) {
      aside = true;
      EXPECT_EQ(read_file(e.path() / "inner"), "inner");
    }
  EXPECT_TRUE(aside);
}

TEST(Store, SparseAndLargeFilesKeepTheirHoles) {
  TempDir t;
  const fs::path big = t.src() / "sparse-5g";
  {
    int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
    ASSERT_EQ(::pwrite(fd, "tail", 4, (5ll << 30) - 4), 4);
    ::close(fd);
  }
  auto store = open_store(t);
  auto snap = take(store, t.src());
  EXPECT_EQ(snap.bytes, 5ull << 30);
  EXPECT_LT(snap.new_bytes, 1u << 20) << "holes must not be stored as zeros";
  fs::remove(big);
  ASSERT_TRUE(rewind(store, t.src()));
  struct stat st {};
  ASSERT_EQ(::stat(big.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 5ll << 30);
  EXPECT_LT(st.st_blocks * 512, 1 << 20) << "restored file must stay sparse";
  int fd = ::open(big.c_str(), O_RDONLY);
  char buf[4];
  ASSERT_EQ(::pread(fd, buf, 4, (5ll << 30) - 4), 4);
  EXPECT_EQ(std::string(buf, 4), "tail");
  ::close(fd);
}

TEST(Store, FifosAndSocketsAreRecordedNeverOpened) {
  TempDir t;
  write_file(t.src() / "plain", "p");
  ASSERT_EQ(::mkfifo((t.src() / "fifo").c_str(), 0640), 0);
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sp = (t.src() / "sock").string();
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sp.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto store = open_store(t);
  // Opening the FIFO would block forever; the alarm turns that into a failure.
  int status = in_child([&] {
    ::alarm(20);
    auto s = Store::open(t.store());
    TakeOptions o;
    o.source = t.src();
    ::_exit(s && s.value().take(o) ? 0 : 1);
  });
  ASSERT_TRUE(WIFEXITED(status)) << "snapshot blocked on the FIFO";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ::close(sock);
  fs::remove(t.src() / "fifo");
  auto r = rewind(store, t.src());
  ASSERT_TRUE(r) << r.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat((t.src() / "fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(Store, DeepPathsBeyondPathMax) {
  TempDir t;
  std::string rel;
  for (int i = 0; i < 40; ++i) rel += (i ? "/" : "") + std::string(120, static_cast<char>('a' + i % 26));
  ASSERT_GT(rel.size(), 4096u);
  // Build it with relative steps: the full path is longer than PATH_MAX.
  int fd = ::open(t.src().c_str(), O_RDONLY | O_DIRECTORY);
  std::size_t start = 0;
  while (true) {
    std::size_t slash = rel.find('/', start);
    std::string comp = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    ::mkdirat(fd, comp.c_str(), 0755);
    int next = ::openat(fd, comp.c_str(), O_RDONLY | O_DIRECTORY);
    ::close(fd);
    fd = next;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  int f = ::openat(fd, "leaf", O_CREAT | O_WRONLY, 0644);
  ASSERT_EQ(::write(f, "deep", 4), 4);
  ::close(f);
  ::close(fd);
  auto store = open_store(t);
  auto snap = take(store, t.src());
  EXPECT_EQ(snap.files, 1u);
  EXPECT_FALSE(snap.incomplete) << (snap.warnings.empty() ? "" : snap.warnings[0]);
  std::string top = rel.substr(0, 120);
  int root = ::open(t.src().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(::renameat(root, top.c_str(), root, "moved-away"), 0);
  ::close(root);
  auto r = rewind(store, t.src());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r.value().files_written, 1u);
}

TEST(Store, UnreadableFilesMakeTheSnapshotIncompleteAndAreLeftAlone) {
  TempDir t;
  write_file(t.src() / "ok", "readable");
  write_file(t.src() / "locked", "cannot read", 0000);
  ::chmod(t.src().c_str(), 0755);
  ::chmod(t.path().c_str(), 0755);
  // Root reads everything; drop to nobody in a child to see permission denied.
  if (::geteuid() == 0) {
    struct passwd* nobody = ::getpwnam("nobody");
    if (nobody == nullptr) GTEST_SKIP() << "no user nobody";
    fs::create_directories(t.store());
    ::chown(t.store().c_str(), nobody->pw_uid, nobody->pw_gid);
    ::chown((t.src() / "ok").c_str(), nobody->pw_uid, nobody->pw_gid);
    int status = in_child([&] {
      if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(3);
      auto s = Store::open(t.store());
      if (!s) ::_exit(4);
      TakeOptions o;
      o.source = t.src();
      auto snap = s.value().take(o);
      if (!snap) ::_exit(5);
      if (!snap.value().incomplete || snap.value().warnings.empty()) ::_exit(6);
      if (snap.value().warnings[0].find("locked") == std::string::npos) ::_exit(7);
      ::_exit(0);
    });
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
  } else {
    auto store = open_store(t);
    auto snap = take(store, t.src());
    EXPECT_TRUE(snap.incomplete);
  }
  auto store = open_store(t);
  write_file(t.src() / "locked", "changed later", 0600);
  auto r = rewind(store, t.src());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read_file(t.src() / "locked"), "changed later");
}

TEST(Store, StoreInsideTheSourceIsRefused) {
  TempDir t;
  write_file(t.src() / "f", "x");
  auto s = Store::open(t.src() / ".snapshots");
  ASSERT_TRUE(s);
  TakeOptions o;
  o.source = t.src();
  auto r = s.value().take(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("outside"), std::string::npos);
}

TEST(Store, PruneKeepsNewestAndDropsUnusedObjects) {
  TempDir t;
  auto store = open_store(t);
  std::vector<SnapshotInfo> snaps;
  for (int i = 0; i < 4; ++i) {
    write_file(t.src() / "f", "version " + std::to_string(i));
    snaps.push_back(take(store, t.src()));
  }
  auto p = store.prune(2);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p.value().removed_ids.size(), 2u);
  EXPECT_EQ(p.value().objects_removed, 4u);  // two contents, two manifests
  auto list = store.list().value();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, snaps[2].id);
  auto r = rewind(store, t.src(), snaps[2].id);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(read_file(t.src() / "f"), "version 2");
  auto missing = rewind(store, t.src(), snaps[0].id);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, px::ErrorKind::not_found);
}

// A record that cannot be read still names files only it holds: prune
// deletes nothing then, and says which record and what to do.
TEST(Store, PruneRefusesWhileARecordCannotBeRead) {
  TempDir t;
  auto store = open_store(t);
  write_file(t.src() / "f", "only in the damaged one");
  const SnapshotInfo damaged = take(store, t.src());
  write_file(t.src() / "f", "later");
  take(store, t.src());
  write_file(t.store() / "snapshots" / (damaged.id + ".json"), "{not json", 0600);
  auto p = store.prune(1);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().kind, px::ErrorKind::conflict);
  EXPECT_NE(p.error().message.find(damaged.id + ".json"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("Nothing was pruned"), std::string::npos) << p.error().message;
  // Its objects are all still there: the record, once restored, rewinds.
  std::size_t objects = 0;
  for (const auto& e : fs::recursive_directory_iterator(t.store() / "objects"))
    if (e.is_regular_file()) ++objects;
  EXPECT_EQ(objects, 4u);  // two contents, two manifests
}

TEST(Store, FindByPrefixAndDefaultSkipsPreRewind) {
  TempDir t;
  write_file(t.src() / "f", "1");
  auto store = open_store(t);
  auto s1 = take(store, t.src());
  write_file(t.src() / "f", "2");
  auto r = rewind(store, t.src());
  ASSERT_TRUE(r);
  auto found = store.find(s1.id.substr(0, s1.id.size() - 2));
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found.value().id, s1.id);
  // A second rewind with no --to targets s1 again, not the pre-rewind snapshot.
  auto again = rewind(store, t.src());
  ASSERT_TRUE(again);
  EXPECT_EQ(again.value().target_id, s1.id);
  EXPECT_TRUE(again.value().undo_id.empty()) << "nothing to change, nothing to undo";
}

// Two runs of one agent started together both snapshot its home: the
// second waits for the first's lock and then takes its snapshot, never
// failing for it (it would only after a minute of waiting).
TEST(Store, ASecondWriterWaitsForTheFirst) {
  TempDir t;
  write_file(t.src() / "f", "1");
  auto a = open_store(t);
  int fd = ::open((t.store() / "lock").c_str(), O_RDWR);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  // The second writer is forked while this process has no other thread: a
  // child forked beside a running thread may inherit a lock that thread held
  // (ASan's allocator's, here once) and wait on it for ever. The child inherits
  // fd, so the lock is let go explicitly, not by a close.
  const auto started = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto s = Store::open(t.store());
    TakeOptions o;
    o.source = t.src();
    ::_exit(s && s.value().take(o) ? 0 : 1);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ::flock(fd, LOCK_UN);
  int status = 0;
  ::waitpid(child, &status, 0);
  const auto waited = std::chrono::steady_clock::now() - started;
  ::close(fd);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_GE(waited, std::chrono::milliseconds(900)) << "the second writer did not wait for the lock";
}
