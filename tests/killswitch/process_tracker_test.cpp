// The process-tree fallback's pause when its deadline passes during the
// first scan: on a loaded machine one scan of a big tree can take the whole
// budget, and the processes it signalled may not have been scheduled yet when
// it is over. Those signals are looked at once more, and a SIGSTOP still
// pending counts as taken (the process runs nothing of its own before it
// takes it), so a deadline that has already passed still pauses a tree that
// does not resist. A zero timeout stands for the load.
#include "killswitch/process_tracker.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

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

// The process that opened a connection is found by both of its ends (ask
// mode names it): a socket whose own end alone is the same, a listener on
// that port here (another namespace's socket in a run), is not the one.
std::uint16_t local_port(int fd) {
  sockaddr_in a{};
  socklen_t n = sizeof a;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0 ? ntohs(a.sin_port) : 0;
}

TEST(TcpSocketOwner, FindsTheClientByBothEndsNotAnotherSocketOfTheSamePort) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  const std::string server = "127.0.0.1:" + std::to_string(local_port(listener));
  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  at.sin_port = htons(local_port(listener));
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  const std::string client_end = "127.0.0.1:" + std::to_string(local_port(client));
  const std::vector<pid_t> us{::getpid()};
  EXPECT_EQ(tcp_socket_owner(us, client_end, server), ::getpid());
  // The listener's end with another peer: no connection has both.
  EXPECT_EQ(tcp_socket_owner(us, server, "127.0.0.1:9"), 0);
  EXPECT_EQ(tcp_socket_owner(us, client_end, "127.0.0.1:9"), 0);
  EXPECT_EQ(tcp_socket_owner(us, "not an address", server), 0);
  ::close(client);
  ::close(listener);
}

}  // namespace
}  // namespace px::killswitch
