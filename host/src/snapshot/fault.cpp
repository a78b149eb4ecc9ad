#include "snapshot/fault.hpp"

#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace px::snapshot {
namespace {

std::mutex& fault_mutex() {
  static std::mutex m;
  return m;
}
FaultHook& hook_slot() {
  static FaultHook hook;
  return hook;
}

}  // namespace

void set_fault_hook(FaultHook hook) {
  std::lock_guard lock(fault_mutex());
  hook_slot() = std::move(hook);
}

void fault_point(std::string_view step) {
  FaultHook hook;
  {
    std::lock_guard lock(fault_mutex());
    hook = hook_slot();
  }
  if (hook) hook(step);
  const char* spec = std::getenv("PARALLEX_TEST_CRASH_AT");
  if (spec == nullptr || *spec == '\0') return;
  std::string_view s(spec);
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos || s.substr(0, colon) != step) return;
  long target = std::strtol(std::string(s.substr(colon + 1)).c_str(), nullptr, 10);
  // Counted per spec so a test can change the spec in a forked child.
  static std::map<std::string, long> counts;
  std::lock_guard lock(fault_mutex());
  if (++counts[std::string(s)] == target) std::raise(SIGKILL);
}

}  // namespace px::snapshot
