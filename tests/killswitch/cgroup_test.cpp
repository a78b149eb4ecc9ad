// A run cgroup with a real tree of 200 processes (setsid daemons, a double
// fork, a busy loop): freeze catches every one, kill leaves nothing.
#include "killswitch/cgroup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "killswitch/proc.hpp"
#include "tree_helpers.hpp"

namespace px::killswitch {
namespace {

using namespace testing;

TEST(Cgroup, ProbeSaysWhereOrWhyNot) {
  const auto probe = probe_cgroup();
  if (probe.usable) {
    EXPECT_FALSE(probe.parent.empty());
    EXPECT_FALSE(probe.how.empty());
  } else {
    EXPECT_FALSE(probe.why_not.empty());
  }
}

TEST(Cgroup, DisabledByEnvironment) {
  const char* old = std::getenv("PARALLEX_NO_CGROUP");
  const std::string saved = old ? old : "";
  ::setenv("PARALLEX_NO_CGROUP", "1", 1);
  const auto probe = probe_cgroup();
  if (old)
    ::setenv("PARALLEX_NO_CGROUP", saved.c_str(), 1);
  else
    ::unsetenv("PARALLEX_NO_CGROUP");
  EXPECT_FALSE(probe.usable);
  EXPECT_NE(probe.why_not.find("PARALLEX_NO_CGROUP"), std::string::npos);
}

TEST(Cgroup, RefusesBadNames) {
  const auto probe = probe_cgroup();
  if (!probe.usable) GTEST_SKIP() << probe.why_not;
  EXPECT_FALSE(RunCgroup::create(probe, "../escape", {}));
  EXPECT_FALSE(RunCgroup::create(probe, "", {}));
}

TEST(Cgroup, FreezeThawKillTreeOf200) {
  const auto probe = probe_cgroup();
  if (!probe.usable) GTEST_SKIP() << probe.why_not;
  auto cg = RunCgroup::create(probe, "test-cg-" + std::to_string(::getpid()), {});
  ASSERT_TRUE(cg) << cg.error().message;
  Tree tree = spawn_tree(200, cg.value().cgroup_fd());
  auto marked = marked_processes(tree.mark);
  ASSERT_GE(marked.size(), 195u);  // 200, less a few short-lived ones (the daemon's sleeps)
  // Nothing escaped: every marked process (detached ones included) is in the cgroup.
  auto in = cg.value().pids();
  for (const pid_t p : marked)
    EXPECT_TRUE(std::find(in.begin(), in.end(), p) != in.end() || ended_or_ending(p))
        << "pid " << p << " escaped";

  ASSERT_TRUE(cg.value().freeze());
  EXPECT_TRUE(cg.value().frozen().value());
  marked = marked_processes(tree.mark);
  for (const pid_t p : marked)
    EXPECT_TRUE(task_is_cgroup_frozen(p) || ended_or_ending(p))
        << "pid " << p << " not frozen, wchan "
        << read_proc_file("/proc/" + std::to_string(p) + "/wchan").value_or("?");
  const auto size = alive_size(tree);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(alive_size(tree), size) << "the setsid daemon kept writing while frozen";

  ASSERT_TRUE(cg.value().thaw());
  EXPECT_FALSE(cg.value().frozen().value());
  EXPECT_TRUE(wait_until([&] { return alive_size(tree) > size; }, 2000)) << "the daemon did not resume";

  ASSERT_TRUE(cg.value().kill());
  EXPECT_FALSE(cg.value().populated().value());
  reap(tree.root);
  EXPECT_TRUE(wait_until([&] { return marked_processes(tree.mark).empty(); }, 2000));
  ASSERT_TRUE(cg.value().remove());
  EXPECT_FALSE(fs::exists(cg.value().path()));
  fs::remove_all(tree.dir);
}

TEST(Cgroup, KillWorksOnAFrozenCgroup) {
  const auto probe = probe_cgroup();
  if (!probe.usable) GTEST_SKIP() << probe.why_not;
  auto cg = RunCgroup::create(probe, "test-cgk-" + std::to_string(::getpid()), {});
  ASSERT_TRUE(cg) << cg.error().message;
  Tree tree = spawn_tree(20, cg.value().cgroup_fd());
  ASSERT_TRUE(cg.value().freeze());
  ASSERT_TRUE(cg.value().kill());
  reap(tree.root);
  EXPECT_TRUE(marked_processes(tree.mark).empty());
  fs::remove_all(tree.dir);
}

}  // namespace
}  // namespace px::killswitch
