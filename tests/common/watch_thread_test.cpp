// WatchThread: a real thread polling a real pipe, woken by stop().
#include "common/watch_thread.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>

#include "wait.hpp"

namespace px {
namespace {

using namespace std::chrono_literals;
using test::wait_until;

// A non-blocking pipe: the watch polls its read end, the test writes to the other.
struct WatchPipe {
  UniqueFd read_end, write_end;
  WatchPipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      read_end = UniqueFd(fds[0]);
      write_end = UniqueFd(fds[1]);
    }
  }
  void put(const std::string& bytes) const {
    ASSERT_EQ(::write(write_end.get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
};

// What a callback read, shared with the test's thread.
struct Received {
  std::mutex mu;
  std::string bytes;
  void add(const std::string& more) {
    std::lock_guard lock(mu);
    bytes += more;
  }
  std::string get() {
    std::lock_guard lock(mu);
    return bytes;
  }
};

// Reads what is there; with `one_byte`, a byte per call.
void read_into(int fd, Received& out, bool one_byte = false) {
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, one_byte ? 1 : sizeof buf)) > 0;) {
    out.add(std::string(buf, static_cast<std::size_t>(n)));
    if (one_byte) return;
  }
}

// stop() within a second; a stop() that hangs ends the test binary rather
// than the whole ctest run.
void expect_prompt_stop(WatchThread& w) {
  const auto start = std::chrono::steady_clock::now();
  auto stopping = std::async(std::launch::async, [&] { w.stop(); });
  if (stopping.wait_for(10s) != std::future_status::ready) {
    std::fprintf(stderr, "WatchThread::stop() did not return within 10 s\n");
    std::_Exit(1);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1000ms);
  EXPECT_FALSE(w.running());
}

// CPU time this process used, all threads.
std::chrono::nanoseconds cpu_used() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

TEST(WatchThread, CallsBackWhenReadable) {
  WatchPipe p;
  ASSERT_TRUE(p.read_end);
  Received got;
  WatchThread w;
  ASSERT_TRUE(w.start(p.read_end.get(), [&] { read_into(p.read_end.get(), got); }));
  EXPECT_TRUE(w.running());
  p.put("one");
  EXPECT_TRUE(wait_until([&] { return got.get() == "one"; }, 5000)) << got.get();
  p.put("two");
  EXPECT_TRUE(wait_until([&] { return got.get() == "onetwo"; }, 5000)) << got.get();
  w.stop();
  EXPECT_FALSE(w.running());
  // Stopped: nothing more is read.
  p.put("three");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(got.get(), "onetwo");
}

TEST(WatchThread, StopReturnsPromptlyWhenNothingIsReadable) {
  WatchPipe p;
  std::atomic<int> calls{0};
  WatchThread w;
  ASSERT_TRUE(w.start(p.read_end.get(), [&] { ++calls; }));
  std::this_thread::sleep_for(50ms);
  expect_prompt_stop(w);
  EXPECT_EQ(calls.load(), 0);
}

TEST(WatchThread, StopReturnsPromptlyWhileTheDescriptorStaysReadable) {
  // A callback that reads nothing: the pipe stays readable, stop() still wins.
  WatchPipe p;
  std::atomic<int> calls{0};
  WatchThread w;
  ASSERT_TRUE(w.start(p.read_end.get(), [&] {
    ++calls;
    std::this_thread::sleep_for(1ms);
  }));
  p.put("x");
  ASSERT_TRUE(wait_until([&] { return calls.load() > 0; }, 5000));
  expect_prompt_stop(w);
}

// The first callback is held until the test lets it go, so the byte written
// after it can only be seen once stop() has already woken the thread.
void run_with_held_first_call(bool last_drain, Received& got) {
  WatchPipe p;
  std::promise<void> entered, release;
  auto released = release.get_future().share();
  std::atomic<bool> first{true};
  WatchThread w;
  WatchThread::Options options;
  options.last_drain = last_drain;
  ASSERT_TRUE(w.start(
      p.read_end.get(),
      [&] {
        read_into(p.read_end.get(), got, /*one_byte=*/true);
        if (first.exchange(false)) {
          entered.set_value();
          released.wait();
        }
      },
      options));
  p.put("1");
  entered.get_future().wait();
  p.put("2");
  auto stopping = std::async(std::launch::async, [&] { w.stop(); });
  // Time for stop() to write its wake-up while the callback still holds the thread.
  std::this_thread::sleep_for(200ms);
  release.set_value();
  ASSERT_EQ(stopping.wait_for(5s), std::future_status::ready);
}

TEST(WatchThread, LastDrainOnStopSeesWhatWasWrittenJustBefore) {
  Received got;
  run_with_held_first_call(/*last_drain=*/true, got);
  EXPECT_EQ(got.get(), "12");
}

TEST(WatchThread, WithoutLastDrainStopLeavesWhatIsQueued) {
  Received got;
  run_with_held_first_call(/*last_drain=*/false, got);
  EXPECT_EQ(got.get(), "1");
}

TEST(WatchThread, LastDrainDoesNotCallBackWhenNothingIsReadable) {
  WatchPipe p;
  std::atomic<int> calls{0};
  WatchThread w;
  WatchThread::Options options;
  options.last_drain = true;
  ASSERT_TRUE(w.start(
      p.read_end.get(), [&] { ++calls; }, options));
  w.stop();
  EXPECT_EQ(calls.load(), 0);
}

TEST(WatchThread, IdleTickFiresWhenAskedAndOnlyThen) {
  WatchPipe p;
  std::atomic<int> ticks{0};
  WatchThread::Options options;
  options.idle_every = 10ms;
  options.on_idle = [&] { ++ticks; };
  WatchThread w;
  ASSERT_TRUE(w.start(
      p.read_end.get(), [] {}, options));
  EXPECT_TRUE(wait_until([&] { return ticks.load() >= 3; }, 5000)) << ticks.load();
  w.stop();
  const int at_stop = ticks.load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ticks.load(), at_stop);

  // An interval without a callback, or a callback without an interval: no tick.
  for (const bool with_interval : {true, false}) {
    std::atomic<int> none{0};
    WatchThread::Options half;
    if (with_interval)
      half.idle_every = 5ms;
    else
      half.on_idle = [&] { ++none; };
    WatchThread quiet;
    ASSERT_TRUE(quiet.start(
        p.read_end.get(), [] {}, half));
    std::this_thread::sleep_for(50ms);
    quiet.stop();
    EXPECT_EQ(none.load(), 0);
  }
}

TEST(WatchThread, StopTwiceAndDestructionWithoutStartAreSafe) {
  { WatchThread never_started; }
  WatchThread not_started;
  not_started.stop();
  not_started.stop();
  EXPECT_FALSE(not_started.running());

  WatchPipe p;
  WatchThread w;
  ASSERT_TRUE(w.start(p.read_end.get(), [] {}));
  w.stop();
  w.stop();
  EXPECT_FALSE(w.running());
}

TEST(WatchThread, StartsAgainAfterStopButNotTwiceWhileRunning) {
  WatchPipe p;
  Received got;
  WatchThread w;
  ASSERT_TRUE(w.start(p.read_end.get(), [&] { read_into(p.read_end.get(), got); }));
  const auto again = w.start(p.read_end.get(), [] {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::internal);
  w.stop();
  ASSERT_TRUE(w.start(p.read_end.get(), [&] { read_into(p.read_end.get(), got); }));
  p.put("after");
  EXPECT_TRUE(wait_until([&] { return got.get() == "after"; }, 5000)) << got.get();
}

TEST(WatchThread, DestructorStopsTheThread) {
  WatchPipe p;
  std::atomic<int> calls{0};
  {
    WatchThread w;
    ASSERT_TRUE(w.start(p.read_end.get(), [&] {
      char c;
      while (::read(p.read_end.get(), &c, 1) > 0) ++calls;
    }));
    p.put("ab");
    ASSERT_TRUE(wait_until([&] { return calls.load() == 2; }, 5000));
  }
  p.put("c");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(calls.load(), 2);
}

void no_op_handler(int) {}

TEST(WatchThread, SignalsDoNotEndTheWatch) {
  // A handler without SA_RESTART: the thread's poll() fails with EINTR.
  struct sigaction action {
  }, previous{};
  action.sa_handler = no_op_handler;
  ::sigemptyset(&action.sa_mask);
  ASSERT_EQ(::sigaction(SIGUSR1, &action, &previous), 0);
  WatchPipe p;
  Received got;
  std::atomic<pthread_t> thread{};
  std::atomic<bool> known{false};
  std::atomic<int> ticks{0};
  WatchThread::Options options;
  options.idle_every = 20ms;
  options.on_idle = [&] { ++ticks; };
  WatchThread w;
  ASSERT_TRUE(w.start(
      p.read_end.get(),
      [&] {
        thread = ::pthread_self();
        known = true;
        read_into(p.read_end.get(), got);
      },
      options));
  p.put("a");
  ASSERT_TRUE(wait_until([&] { return known.load(); }, 5000));
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(::pthread_kill(thread.load(), SIGUSR1), 0);
    std::this_thread::sleep_for(1ms);
  }
  p.put("b");
  EXPECT_TRUE(wait_until([&] { return got.get() == "ab"; }, 5000)) << got.get();
  const int before = ticks.load();
  EXPECT_TRUE(wait_until([&] { return ticks.load() > before; }, 5000));
  expect_prompt_stop(w);
  ::sigaction(SIGUSR1, &previous, nullptr);
}

TEST(WatchThread, HangUpEndsTheWatchInsteadOfSpinning) {
  WatchPipe p;
  Received got;
  std::atomic<int> calls{0};
  WatchThread w;
  ASSERT_TRUE(w.start(p.read_end.get(), [&] {
    ++calls;
    read_into(p.read_end.get(), got);
  }));
  p.put("last");
  p.write_end.reset();
  EXPECT_TRUE(wait_until([&] { return got.get() == "last"; }, 5000)) << got.get();
  // POLLIN with the hang-up, then the hang-up alone ends it: a call or two,
  // and no thread spinning on a poll() that returns at once.
  std::this_thread::sleep_for(20ms);
  const auto before = cpu_used();
  std::this_thread::sleep_for(200ms);
  EXPECT_LT(cpu_used() - before, 50ms);
  EXPECT_LE(calls.load(), 2);
  expect_prompt_stop(w);
}

TEST(WatchThreadDeathTest, AnExceptionFromACallbackEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        WatchPipe p;
        WatchThread w;
        (void)w.start(p.read_end.get(), [] { throw std::runtime_error("callback failed on purpose"); });
        p.put("x");
        std::this_thread::sleep_for(5s);
      },
      "callback failed on purpose");
}

}  // namespace
}  // namespace px
