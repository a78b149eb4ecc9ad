// The process-tree fallback's pause when its deadline passes during the
// first scan: on a loaded machine one scan of a big tree can take the whole
// budget, and the processes it signalled may not have been scheduled yet when
// it is over. Those signals are looked at once more, and a SIGSTOP still
// pending counts as taken (the process runs nothing of its own before it
// takes it), so a deadline that has already passed still pauses a tree that
// does not resist. A zero timeout stands for the load.
#include "killswitch/process_tracker.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "killswitch/proc.hpp"
#include "tree_helpers.hpp"

namespace px::killswitch {
namespace {

using namespace testing;

TEST(ProcessTracker, ADeadlinePassedInTheFirstScanStillStopsTheTree) {
  // A subreaper before the tree starts, as a supervisor is. The tree is
  // quiet (sleepers only): one that forks on a timer could make a process
  // between a scan and its signal, which a zero deadline leaves no round for.
  auto started = ProcessTracker::start();
  ASSERT_TRUE(started) << started.error().message;
  auto& tracker = *started.value();
  const pid_t root = ::fork();
  ASSERT_GE(root, 0);
  if (root == 0) {
    ::execl("/bin/sh", "sh", "-c", "for i in $(seq 40); do sleep 1000 & done; wait", nullptr);
    ::_exit(127);
  }
  tracker.attach(root);
  ASSERT_TRUE(wait_until([&] { return tracker.scan().size() == 41; }, 10000)) << tracker.scan().size();

  const auto stopped = tracker.stop_all(std::chrono::milliseconds(0));
  EXPECT_TRUE(stopped) << stopped.error().message;
  for (const auto& p : tracker.scan()) EXPECT_TRUE(stopped_or_stop_pending(p.pid)) << "pid " << p.pid;

  const auto killed = tracker.kill_all();
  EXPECT_TRUE(killed) << killed.error().message;
  EXPECT_TRUE(wait_until([&] { return tracker.scan().empty(); }, 5000));
  ::waitpid(root, nullptr, 0);
}

}  // namespace
}  // namespace px::killswitch
