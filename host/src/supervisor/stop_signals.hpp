#pragma once
// The signals that tell a supervisor to stop: SIGTERM, SIGHUP, and a SIGINT
// sent to it (timeout -s INT, kill -INT). A ^C typed at the terminal also
// reaches the command (same process group) and is the command's to handle,
// so a SIGINT the kernel sent for the terminal is left alone.
//
// While a StopSignals lives, the calling thread (and every thread it starts)
// has them blocked; a thread of its own reads them and calls `on_stop` once.
#include <atomic>
#include <functional>
#include <thread>

#include "common/unique_fd.hpp"

namespace px::supervisor {

class StopSignals {
 public:
  explicit StopSignals(std::function<void(int signal)> on_stop);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that asked to stop, 0 while none did.
  int received() const { return received_.load(); }

 private:
  void loop();

  std::function<void(int)> on_stop_;
  std::atomic<int> received_{0};
  UniqueFd signals_;  // signalfd
  UniqueFd wake_;     // eventfd: the destructor ends the loop
  std::thread thread_;
  bool previously_blocked_[3] = {false, false, false};
};

}  // namespace px::supervisor
