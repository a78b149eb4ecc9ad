#pragma once
// The signals that tell a supervisor to stop: SIGTERM, SIGHUP, and a SIGINT
// sent to it (timeout -s INT, kill -INT). A ^C typed at the terminal also
// reaches the command (same process group) and is the command's to handle,
// so a SIGINT the kernel sent for the terminal is left alone.
//
// While a StopSignals lives, the calling thread (and every thread it starts)
// has them blocked, so none is lost or acted on by its default action. Its
// own thread, which reads them and calls `on_stop` once, starts only with
// start(): the run's seal is forked before it, and a fork copies only the
// forking thread (a lock another thread held stays held in the child).
// Until then take_pending() reads what came, on the caller's thread.
#include <atomic>
#include <functional>

#include "common/unique_fd.hpp"
#include "common/watch_thread.hpp"

namespace px::supervisor {

class StopSignals {
 public:
  explicit StopSignals(std::function<void(int signal)> on_stop);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The thread that reads the signals from now on, calling `on_stop`.
  void start();
  // Before start(): reads the signals that came, calling `on_stop` for the
  // first. Nothing once the thread reads them.
  void take_pending();
  // The signal that asked to stop, 0 while none did.
  int received() const { return received_.load(); }

 private:
  void read_pending(bool notify);

  std::function<void(int)> on_stop_;
  std::atomic<int> received_{0};
  UniqueFd signals_;  // signalfd
  bool previously_blocked_[3] = {false, false, false};
  WatchThread watch_;  // last: stopped before what its callback uses goes
};

}  // namespace px::supervisor
