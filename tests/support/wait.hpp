#pragma once
// Waiting for something a real process does (a file appears, a process
// ends): asked again every few milliseconds until it holds or the time is up.
#include <chrono>
#include <functional>
#include <thread>

namespace px::test {

// Whether `cond` held within `ms` milliseconds (asked once more at the end).
inline bool wait_until(const std::function<bool()>& cond, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

}  // namespace px::test
