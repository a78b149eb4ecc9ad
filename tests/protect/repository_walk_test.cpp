// The walk for repositories a run made (protect/repository_walk.hpp) and
// its cache (protect/walk_cache.hpp), on real folders: the cache finds
// what a full walk finds while reading only what changed, a folder changed
// too close to its read is read again, a damaged or forged cache file is
// never trusted over a change time, and a bound says what it left out. Then
// through the real `parallex`: a repository made deep in a tree the cache
// knows is checked at the next run's end, and a tree too large for one run's
// bound is named in the record.
#include "protect/repository_walk.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "common/unique_fd.hpp"
#include "protect/walk_cache.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using px::UniqueFd;
using px::protect::find_repositories;
using px::protect::WalkBounds;
using px::protect::WalkCache;
using px::protect::WalkFound;

constexpr WalkBounds kEverything{64, 100000, true};

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::set<std::string> names(const std::vector<fs::path>& paths) {
  std::set<std::string> out;
  for (const auto& p : paths) out.insert(p.string());
  return out;
}

// Change times older than the cache's margin (50 ms) before the next read.
void let_change_times_settle() {
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
}

class RepositoryWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    // Under the home, like a user's projects (the seal's /tmp is its own).
    const char* home = std::getenv("HOME");
    const fs::path base = fs::path(home && *home ? home : "/tmp") / ".cache/parallex-walk-tests";
    fs::create_directories(base);
    std::string templ = (base / "walk-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    root_ = templ;
    folder_ = root_ / "project";
    caches_ = root_ / "state/walk";
    fs::create_directories(folder_);
    dir_ = UniqueFd(::open(folder_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_);
    if (!WalkCache::trusts_change_times(dir_.get()))
      GTEST_SKIP() << folder_ << " is on a filesystem whose change times the walk cache does not rely on";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // A project: repositories at several depths, one inside another, one in
  // node_modules (looked into like any folder: git runs there too), a link
  // to a repository (not followed), .git files (a worktree's, a gitfile in a
  // folder deeper down; found as gitfiles), empty folders.
  void make_tree() {
    for (const char* d :
         {"src/a/b", "src/c", "docs", "vendor/lib/.git/hooks", "vendor/lib/sub/inner/.git",
          "third_party/x/y/z/deep/.git", "node_modules/pkg/.git", "elsewhere/r/.git", "empty"})
      fs::create_directories(folder_ / d);
    write_text(folder_ / "src/a/b/main.c", "int main;\n");
    write_text(folder_ / "wt/.git", "gitdir: ../.git/worktrees/wt\n");
    write_text(folder_ / "src/c/lib/.git", "gitdir: ../../../.cache/gd\n");
    write_text(folder_ / "src/c/lib/lib.c", "int x;\n");
    fs::create_directory_symlink(folder_ / "elsewhere/r", folder_ / "linked");
  }
  WalkCache load() { return WalkCache::load(caches_, folder_, dir_.get()); }
  WalkFound walk_and_save(WalkCache& cache, const WalkBounds& bounds = kEverything) {
    WalkFound found = find_repositories(dir_.get(), bounds, cache);
    EXPECT_TRUE(cache.save()) << cache.file();
    return found;
  }
  std::size_t folder_count() const {
    std::size_t n = 1;  // the run folder
    for (fs::recursive_directory_iterator it(folder_), end; it != end; ++it) {
      const auto name = it->path().filename();
      if (it->is_symlink() || !it->is_directory()) continue;
      if (name == ".git") {
        it.disable_recursion_pending();
        continue;
      }
      ++n;
    }
    return n;
  }

  const std::set<std::string> expected_{"elsewhere/r", "node_modules/pkg", "third_party/x/y/z/deep",
                                        "vendor/lib", "vendor/lib/sub/inner"};
  const std::set<std::string> gitfiles_{"src/c/lib", "wt"};
  fs::path root_, folder_, caches_;
  UniqueFd dir_;
};

// The cache changes how many folders are read, never what is found: the
// second walk reads nothing and finds what a walk without a cache finds.
TEST_F(RepositoryWalk, TheCacheFindsWhatAFullWalkFindsReadingNothingUnchanged) {
  make_tree();
  WalkCache none;
  const WalkFound full = find_repositories(dir_.get(), kEverything, none);
  EXPECT_EQ(names(full.repositories), expected_);
  EXPECT_EQ(names(full.gitfiles), gitfiles_);
  EXPECT_EQ(full.read + full.leaves, folder_count());
  EXPECT_GT(full.leaves, 0u) << "no folder was told a leaf by its link count";
  EXPECT_EQ(full.cached, 0u);
  EXPECT_TRUE(full.unvisited.empty());

  let_change_times_settle();
  WalkCache first = load();
  EXPECT_EQ(first.size(), 0u);
  const WalkFound warm = walk_and_save(first);
  EXPECT_EQ(names(warm.repositories), expected_);
  EXPECT_EQ(names(warm.gitfiles), gitfiles_);
  EXPECT_EQ(warm.read + warm.leaves, folder_count());
  ASSERT_TRUE(fs::exists(first.file()));
  EXPECT_EQ(fs::status(first.file()).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);

  WalkCache second = load();
  EXPECT_EQ(second.size(), warm.read + warm.leaves)
      << "what was read, and the leaves told by their link count";
  const auto before = fs::last_write_time(second.file());
  const WalkFound cached = walk_and_save(second);
  EXPECT_EQ(names(cached.repositories), expected_);
  EXPECT_EQ(names(cached.gitfiles), gitfiles_) << "a gitfile the cache knows of is found without a read";
  EXPECT_EQ(cached.read, 0u);
  EXPECT_EQ(cached.cached + cached.leaves, folder_count());
  EXPECT_EQ(fs::last_write_time(second.file()), before) << "a cache that did not change was written again";
}

// A folder holding no folder is told by its link count (one stat from its
// parent), not read; once a .git folder is made in it, its count says so and
// it is read, and the repository found.
// A run's last save can come after Parallex's state folder was removed (the
// watchdog finishes a run after `parallex run` returned): it writes nothing
// and makes no folder again. On a fresh home, load() makes the parents.
TEST_F(RepositoryWalk, ASaveAfterTheStateFolderWasRemovedMakesNothing) {
  fs::remove_all(root_ / "state");
  WalkCache cache = load();
  EXPECT_TRUE(fs::is_directory(root_ / "state")) << "load() makes the state folder on a fresh home";
  make_tree();
  find_repositories(dir_.get(), kEverything, cache);
  fs::remove_all(root_ / "state");
  EXPECT_TRUE(cache.save()) << cache.file();
  EXPECT_FALSE(fs::exists(root_ / "state")) << "the removed state folder was made again";
}

TEST_F(RepositoryWalk, ALeafIsToldByItsLinkCountUntilItHoldsAFolder) {
  for (int i = 0; i < 20; ++i) fs::create_directories(folder_ / "leaves" / std::to_string(i));
  write_text(folder_ / "leaves/3/file", "x\n");
  WalkCache none;
  const WalkFound before = find_repositories(dir_.get(), kEverything, none);
  if (before.leaves == 0) GTEST_SKIP() << "this filesystem's link counts do not count sub-folders";
  EXPECT_EQ(before.read, 2u);  // the run folder and leaves/
  EXPECT_EQ(before.leaves, 20u);
  EXPECT_TRUE(before.repositories.empty());
  fs::create_directories(folder_ / "leaves/7/.git/hooks");
  const WalkFound after = find_repositories(dir_.get(), kEverything, none);
  EXPECT_EQ(names(after.repositories), (std::set<std::string>{"leaves/7"}));
  EXPECT_EQ(after.read, 3u);
  EXPECT_EQ(after.leaves, 19u);
}

// The start of a run walks two levels; the end's walk takes those from the
// cache and reads only the deeper ones.
TEST_F(RepositoryWalk, TheStartsShallowWalkFillsTheCacheForTheEnds) {
  make_tree();
  let_change_times_settle();
  WalkCache cache = load();
  const WalkFound start = find_repositories(dir_.get(), {2, 256, false}, cache);
  EXPECT_EQ(names(start.repositories),
            (std::set<std::string>{"elsewhere/r", "node_modules/pkg", "vendor/lib"}));
  const WalkFound end = walk_and_save(cache);
  EXPECT_EQ(names(end.repositories), expected_);
  EXPECT_EQ(end.cached, start.read + start.leaves);
  EXPECT_EQ(end.read + end.cached + end.leaves, folder_count());
}

// A repository made deep inside a tree the cache knows (`git init
// a/b/c/x` after a run): the folders on its way changed, so they are read
// again and it is found; the rest is taken from the cache.
TEST_F(RepositoryWalk, ARepositoryMadeDeepInACachedTreeIsFound) {
  make_tree();
  let_change_times_settle();
  WalkCache first = load();
  walk_and_save(first);
  let_change_times_settle();
  fs::create_directories(folder_ / "src/a/b/c/x/.git/hooks");
  fs::create_directories(folder_ / "third_party/x/y/z/deep/q/.git");  // inside a repository found before
  WalkCache second = load();
  const WalkFound found = walk_and_save(second);
  std::set<std::string> expected = expected_;
  expected.insert({"src/a/b/c/x", "third_party/x/y/z/deep/q"});
  EXPECT_EQ(names(found.repositories), expected);
  // src/a/b gained c, deep gained q; c, x and q are new.
  EXPECT_EQ(found.read, 5u);
}

// A gitfile (or a link named .git) made in a folder the cache knows, a leaf
// or not, is found at the next walk: making it changed the folder. One
// rewritten in place changes no folder, and is still named each walk (the
// quarantine judges what it says).
TEST_F(RepositoryWalk, AGitfileMadeInAKnownFolderIsFound) {
  make_tree();
  let_change_times_settle();
  WalkCache first = load();
  walk_and_save(first);
  let_change_times_settle();
  write_text(folder_ / "docs/.git", "gitdir: ../.cache/gd\n");
  fs::create_symlink("../elsewhere/r/.git", folder_ / "src/a/.git");
  WalkCache second = load();
  const WalkFound found = walk_and_save(second);
  std::set<std::string> expected = gitfiles_;
  expected.insert({"docs", "src/a"});
  EXPECT_EQ(names(found.gitfiles), expected);
  let_change_times_settle();
  write_text(folder_ / "docs/.git", "gitdir: /elsewhere\n");
  WalkCache third = load();
  EXPECT_EQ(names(walk_and_save(third).gitfiles), expected);
}

// The index's gitlinks are kept with the walk, read again only when the
// index is another file or changed since (the same rule as a folder's).
TEST_F(RepositoryWalk, TheIndexsGitlinksAreKeptWhileTheIndexIsUnchanged) {
  write_text(folder_ / "index", "an index\n");
  let_change_times_settle();
  struct stat st {};
  ASSERT_EQ(::stat((folder_ / "index").c_str(), &st), 0);
  WalkCache first = load();
  walk_and_save(first);
  first.set_gitlinks(st, px::protect::change_clock_now_ns(), {"lib", "node_modules/pkg"});
  ASSERT_TRUE(first.save());
  WalkCache second = load();
  const auto* links = second.gitlinks(st);
  ASSERT_NE(links, nullptr);
  EXPECT_EQ(*links, (std::vector<std::string>{"lib", "node_modules/pkg"}));
  write_text(folder_ / "index", "another index\n");
  ASSERT_EQ(::stat((folder_ / "index").c_str(), &st), 0);
  EXPECT_EQ(load().gitlinks(st), nullptr) << "a changed index was trusted";
  // Stamped within the margin of its read: not trusted.
  WalkCache racy = load();
  racy.set_gitlinks(st, px::protect::change_clock_now_ns(), {"lib"});
  ASSERT_TRUE(racy.save());
  EXPECT_EQ(load().gitlinks(st), nullptr) << "an index changed in the tick of its read was trusted";
}

// A folder removed or replaced by a link since the cache was written is
// not walked into from the cache: its parent changed.
TEST_F(RepositoryWalk, AFolderReplacedByALinkIsNotFollowed) {
  make_tree();
  let_change_times_settle();
  WalkCache first = load();
  walk_and_save(first);
  fs::remove_all(folder_ / "vendor/lib");
  fs::create_directories(root_ / "outside/lib/.git");
  fs::create_directory_symlink(root_ / "outside/lib", folder_ / "vendor/lib");
  WalkCache second = load();
  const WalkFound found = walk_and_save(second);
  EXPECT_EQ(names(found.repositories),
            (std::set<std::string>{"elsewhere/r", "node_modules/pkg", "third_party/x/y/z/deep"}));
}

// The kernel stamps change times from a clock that moves once a tick: an
// entry made right after a walk read its folder can leave the folder's
// change time as the walk recorded it. Such a folder is read again, never
// trusted, so what was made is found whichever tick it fell in.
TEST_F(RepositoryWalk, AFolderChangedWithinTheRacyMarginIsReadAgain) {
  int same_tick = 0;
  for (int i = 0; i < 20; ++i) {
    const fs::path dir = folder_ / ("f" + std::to_string(i));
    fs::create_directories(dir);
    WalkCache first = load();
    walk_and_save(first);
    struct stat read_then {};
    ASSERT_EQ(::stat(dir.c_str(), &read_then), 0);
    fs::create_directories(dir / "r/.git");  // at once: often in the tick of the read
    struct stat now {};
    ASSERT_EQ(::stat(dir.c_str(), &now), 0);
    if (now.st_ctim.tv_sec == read_then.st_ctim.tv_sec && now.st_ctim.tv_nsec == read_then.st_ctim.tv_nsec)
      ++same_tick;
    WalkCache second = load();
    const WalkFound found = walk_and_save(second);
    EXPECT_TRUE(names(found.repositories).count(dir.filename().string() + "/r"))
        << "missed a repository made in the tick of the walk's read (iteration " << i << ")";
  }
  std::printf("[          ] %d of 20 repositories were made in the tick of the walk's read\n", same_tick);

  // Once its change time is older than the margin, a folder read again is
  // trusted by the walk after.
  let_change_times_settle();
  WalkCache settle = load();
  walk_and_save(settle);
  WalkCache trusted = load();
  EXPECT_EQ(walk_and_save(trusted).read, 0u);
}

// The rule itself, on a folder's real stat: trusted only with its change
// time older than its read by the margin, and the same inode.
TEST_F(RepositoryWalk, TheCacheTrustsOnlyAChangeTimeOlderThanItsReadByTheMargin) {
  struct stat st {};
  ASSERT_EQ(::stat(folder_.c_str(), &st), 0);
  const std::int64_t ctime = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  WalkCache cache = load();
  auto folder = [&](std::int64_t read_ns) {
    return WalkCache::Folder{static_cast<std::uint64_t>(st.st_dev),
                             static_cast<std::uint64_t>(st.st_ino),
                             ctime,
                             read_ns,
                             false,
                             false,
                             {}};
  };
  cache.read("", folder(ctime + 10'000'000));
  EXPECT_EQ(cache.unchanged("", st), nullptr) << "trusted 10 ms after its change";
  cache.read("", folder(ctime + 60'000'000));
  EXPECT_NE(cache.unchanged("", st), nullptr);
  struct stat other = st;
  other.st_ctim.tv_nsec = (other.st_ctim.tv_nsec + 1) % 1000000000;
  EXPECT_EQ(cache.unchanged("", other), nullptr) << "trusted another change time";
  other = st;
  other.st_ino += 1;
  EXPECT_EQ(cache.unchanged("", other), nullptr) << "trusted another inode";
  EXPECT_EQ(cache.unchanged("elsewhere", st), nullptr) << "trusted a folder it never read";
}

// Damaged, foreign or loosely kept cache files are ignored (every folder is
// read, what is there is found) and replaced by a good one.
TEST_F(RepositoryWalk, ACorruptOrForeignCacheFileIsIgnoredAndRewritten) {
  make_tree();
  let_change_times_settle();
  WalkCache first = load();
  walk_and_save(first);
  const fs::path file = first.file();
  const std::string good = read_text(file);
  ASSERT_GT(good.size(), 100u);
  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 0x20;
  std::string other_folder;
  {
    // The cache of another folder, put in this one's place.
    const fs::path elsewhere = root_ / "other";
    fs::create_directories(elsewhere / "a");
    UniqueFd fd(::open(elsewhere.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    WalkCache c = WalkCache::load(caches_, elsewhere, fd.get());
    find_repositories(fd.get(), kEverything, c);
    ASSERT_TRUE(c.save());
    other_folder = read_text(c.file());
  }
  const std::vector<std::pair<std::string, std::string>> bad{
      {"a flipped byte", flipped},
      {"cut short", good.substr(0, good.size() / 2)},
      {"empty", ""},
      {"garbage", std::string(4096, '\x7f')},
      {"another folder's", other_folder},
      {"another format", "PXWALK99" + good.substr(8)},
  };
  for (const auto& [what, bytes] : bad) {
    write_text(file, bytes);
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    WalkCache cache = load();
    EXPECT_EQ(cache.size(), 0u) << what;
    const WalkFound found = walk_and_save(cache);
    EXPECT_EQ(names(found.repositories), expected_) << what;
    EXPECT_EQ(found.read + found.leaves, folder_count()) << what;
    WalkCache after = load();
    EXPECT_EQ(after.size(), found.read + found.leaves) << what << ": not rewritten";
  }
  // A good file anyone may write is not this cache.
  fs::permissions(file, fs::perms::others_write, fs::perm_options::add);
  WalkCache loose = load();
  EXPECT_EQ(loose.size(), 0u);
  walk_and_save(loose);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::others_write, fs::perms::none);
}

// A well-formed cache that lies (a folder said to hold nothing, written with
// a change time the folder does not have) is not trusted for that folder:
// the change time decides, not the file.
TEST_F(RepositoryWalk, ACacheThatLiesAboutAChangedFolderIsNotTrusted) {
  make_tree();
  let_change_times_settle();
  struct stat st {};
  ASSERT_EQ(::stat((folder_ / "vendor").c_str(), &st), 0);
  WalkCache forged = load();
  const std::int64_t ctime = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  forged.read("vendor", {static_cast<std::uint64_t>(st.st_dev),
                         static_cast<std::uint64_t>(st.st_ino),
                         ctime - 1'000'000'000,
                         ctime,
                         false,
                         false,
                         {}});
  ASSERT_TRUE(forged.save());
  WalkCache cache = load();
  ASSERT_EQ(cache.size(), 1u);
  EXPECT_EQ(names(walk_and_save(cache).repositories), expected_);
}

// A bound on reads: what it left is named (shallowest first), not dropped
// in silence; folders taken from the cache do not count against it, so the
// next walk goes further and, once all is known, visits everything.
TEST_F(RepositoryWalk, TheReadBoundSaysWhatItLeft) {
  // Each with a folder of its own, so that each must be read (a leaf is told
  // by its link count).
  for (int i = 0; i < 40; ++i) fs::create_directories(folder_ / ("d" + std::to_string(i)) / "s");
  fs::create_directories(folder_ / "d39/r/.git");
  const WalkBounds small{64, 10, true};
  WalkCache none;
  const WalkFound bounded = find_repositories(dir_.get(), small, none);
  EXPECT_EQ(bounded.read, 10u);
  EXPECT_EQ(bounded.unvisited.size(), 31u);  // the run folder and 9 of 41 read
  for (const auto& p : bounded.unvisited) EXPECT_EQ(p.parent_path(), fs::path()) << p;
  EXPECT_TRUE(bounded.repositories.empty());

  let_change_times_settle();
  std::size_t runs = 0;
  WalkFound found;
  do {
    WalkCache cache = load();
    found = walk_and_save(cache, small);
    ++runs;
  } while (!found.unvisited.empty() && runs < 10);
  EXPECT_TRUE(found.unvisited.empty());
  EXPECT_EQ(names(found.repositories), (std::set<std::string>{"d39/r"}));
  EXPECT_EQ(runs, 5u);  // 10 more folders read each walk: 42 folders (the leaves d*/s are not read)
  WalkCache cache = load();
  const WalkFound known = walk_and_save(cache, small);
  EXPECT_EQ(known.read, 0u);
  EXPECT_EQ(known.cached, 82u);  // the 42 read before and the 40 leaves d*/s, kept since their first look

  // Depth: a folder at the bound that holds folders is named too.
  fs::create_directories(folder_ / "l1/l2/l3/l4");
  WalkCache shallow;
  const WalkFound deep = find_repositories(dir_.get(), {2, 1000, true}, shallow);
  EXPECT_EQ(names(deep.too_deep), (std::set<std::string>{"l1/l2"}));  // d39/r holds only its .git
}

// ---- through the real executable ----

struct Ran {
  int status = -1;
  std::string out;
};

Ran run_shell(const std::string& cmd) {
  Ran r;
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen((cmd + " 2>&1").c_str(), "r"), ::pclose);
  if (!p) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p.get())) > 0;) r.out.append(buf.data(), n);
  const int rc = ::pclose(p.release());
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return r;
}

class WalkThroughRuns : public RepositoryWalk {
 protected:
  Ran px(const std::string& args) {
    fs::create_directories(root_ / "runtime");
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    return run_shell("cd " + shell_quote(folder_.string()) +
                     " && env PARALLEX_HOME=" + shell_quote((root_ / "state").string()) +
                     " XDG_RUNTIME_DIR=" + shell_quote((root_ / "runtime").string()) +
                     " PATH=/usr/bin:/bin " + PARALLEX_EXE + " " + args + " </dev/null");
  }
  // The newest run's record (by its start: two runs can share the second
  // their folders are named by).
  nlohmann::json last_record() const {
    nlohmann::json newest;
    for (const auto& e : fs::directory_iterator(root_ / "state/runs")) {
      auto j = nlohmann::json::parse(read_text(e.path() / "run.json"), nullptr, false);
      if (j.is_object() && (newest.is_null() || j.value("started_at", "") > newest.value("started_at", "")))
        newest = std::move(j);
    }
    return newest;
  }
  std::string notices() const {
    std::string all;
    for (const auto& n : last_record().value("notices", nlohmann::json::array())) all += n.dump() + "\n";
    return all;
  }
};

// A first run fills the cache; a later run makes a repository four levels
// down in the cached tree and plants a hook: its end's walk finds it (the
// folders on its way changed) and the hook is moved aside.
TEST_F(WalkThroughRuns, ARepositoryMadeDeepAfterAFirstRunIsCheckedAtTheNextRunsEnd) {
  make_tree();
  let_change_times_settle();
  ASSERT_EQ(px("run -- /bin/true").status, 0);
  ASSERT_EQ(fs::directory_iterator(root_ / "state/walk") != fs::directory_iterator(), true)
      << "the first run left no walk cache";
  let_change_times_settle();
  const Ran r = px("run -- sh -c " + shell_quote("git init -q a/b/c/x && printf '#!/bin/sh\\nid\\n' > "
                                                 "a/b/c/x/.git/hooks/post-checkout && echo RAN"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("RAN"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(folder_ / "a/b/c/x/.git/hooks/post-checkout")) << "the planted hook stayed";
  std::set<std::string> moved;
  for (const auto& q : last_record().value("quarantined", nlohmann::json::array()))
    moved.insert(fs::path(q.value("path", "")).lexically_relative(folder_).string());
  EXPECT_EQ(moved, (std::set<std::string>{"a/b/c/x/.git/hooks/post-checkout"})) << last_record().dump(1);
}

// A run folder with more folders than one run's end may read: the end says
// which folders it did not look into, on the terminal and in the record; a
// later run, reading only what it does not know, looks at them all.
TEST_F(WalkThroughRuns, FoldersTheBoundLeftAreNamedAndALaterRunVisitsThem) {
  // Each with a folder of its own: a leaf is told by its link count, not read.
  for (int i = 0; i < 1000; ++i) fs::create_directories(folder_ / ("d" + std::to_string(i)) / "s");
  let_change_times_settle();
  const Ran first = px("run -- /bin/true");
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_NE(first.out.find("not looked into for repositories the run made when the run ended"),
            std::string::npos)
      << first.out;
  EXPECT_NE(notices().find("not looked into for repositories the run made"), std::string::npos) << notices();
  EXPECT_NE(notices().find("folders and what is beneath them: d"), std::string::npos) << notices();
  EXPECT_TRUE(last_record().value("quarantined", nlohmann::json::array()).empty()) << "nothing was moved";
  const Ran second = px("run -- /bin/true");
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_EQ(second.out.find("not looked into"), std::string::npos) << second.out;
  EXPECT_EQ(notices().find("not looked into"), std::string::npos) << notices();
}

// Timing, on demand (PX_WALK_BENCH=DIR): a walk with and without the cache.
TEST(RepositoryWalkTiming, OnDemand) {
  const char* dir = std::getenv("PX_WALK_BENCH");
  if (!dir) GTEST_SKIP() << "PX_WALK_BENCH=DIR times the walk of DIR";
  UniqueFd fd(::open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  const fs::path caches = fs::temp_directory_path() / ("px-walk-bench-" + std::to_string(::getpid()));
  auto time = [&](const char* what, auto&& body) {
    std::vector<double> ms;
    for (int i = 0; i < 31; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      body();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("[          ] %-40s median %.3f ms (min %.3f)\n", what, ms[ms.size() / 2], ms[0]);
  };
  time("walk, no cache", [&] {
    WalkCache none;
    find_repositories(fd.get(), {64, 512, true}, none);
  });
  {
    WalkCache c = WalkCache::load(caches, dir, fd.get());
    find_repositories(fd.get(), {64, 100000, true}, c);
    ASSERT_TRUE(c.save());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  time("load the cache", [&] { WalkCache::load(caches, dir, fd.get()); });
  time("load + walk from the cache + save", [&] {
    WalkCache c = WalkCache::load(caches, dir, fd.get());
    find_repositories(fd.get(), {64, 512, true}, c);
    (void)c.save();
  });
  std::error_code ec;
  fs::remove_all(caches, ec);
}

}  // namespace
