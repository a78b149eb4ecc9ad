#pragma once
// A thread that waits in poll() on one descriptor (an inotify or fanotify
// instance, a signalfd, a listening socket) and calls back when it is
// readable, until stop(). stop() wakes the thread through an eventfd of its
// own, so it returns promptly even when nothing ever becomes readable, and
// joins it: once stop() returns, no callback runs any more.
//
// The callbacks run on the watch's thread, one at a time. The descriptor
// stays the caller's: it must outlive the watch (stop() before closing it),
// and be non-blocking when a callback reads until nothing is left (it is
// told the descriptor is readable, not how much). A descriptor that hangs up
// or fails with nothing left to read (a pipe whose writer closed) ends the
// watch: poll() would report it again at once, for ever.
//
// An exception a callback lets out ends the process (std::terminate), as it
// would from any thread: the watches guard a run (decoys, quarantine, kill
// switch), and one that silently ended would leave the run unwatched while
// everything says it is watched.
#include <chrono>
#include <functional>
#include <thread>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px {

// (Outside the class: a nested struct with default member initializers cannot
// be a default argument of its own class's functions.)
struct WatchOptions {
  // When nothing was readable for this long, `on_idle` is called (and again
  // after each such stretch). Zero or no `on_idle`: the thread sleeps until
  // the descriptor is readable or stop() is called.
  std::chrono::milliseconds idle_every{0};
  std::function<void()> on_idle;
  // Once stop() is called, `on_readable` once more if the descriptor is
  // readable then: what was queued just before stop() is taken in rather
  // than left behind. Without it stop() leaves what is queued unread.
  bool last_drain = false;
};

class WatchThread {
 public:
  using Options = WatchOptions;

  WatchThread() = default;
  ~WatchThread() { stop(); }
  WatchThread(const WatchThread&) = delete;
  WatchThread& operator=(const WatchThread&) = delete;

  // Starts the thread on `fd`. An error when it is running already or the
  // eventfd or thread cannot be made (nothing runs then). After stop() it
  // may be started again.
  Status start(int fd, std::function<void()> on_readable, Options options = {});
  // Wakes the thread and joins it; nothing when it does not run. Not from a
  // callback (a thread cannot join itself).
  void stop();
  bool running() const { return thread_.joinable(); }

 private:
  void loop();

  int fd_ = -1;
  std::function<void()> on_readable_;
  Options options_;
  UniqueFd wake_;  // eventfd: stop() writes to it
  std::thread thread_;
};

}  // namespace px
