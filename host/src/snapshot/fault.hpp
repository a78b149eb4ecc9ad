#pragma once
// Crash points for tests. Tests prove that `kill -9` at any step loses nothing:
// with PARALLEX_TEST_CRASH_AT=<step>:<n> the process SIGKILLs itself the n-th
// time it reaches <step> (n counts from 1). A hook set in-process sees every
// step first (tests use it to tamper with the tree at a chosen moment).
#include <functional>
#include <string_view>

namespace px::snapshot {

using FaultHook = std::function<void(std::string_view step)>;

// Replaces the in-process hook; pass {} to clear it.
void set_fault_hook(FaultHook hook);

// Called by the store at each named step. Costs one getenv when no hook is set.
void fault_point(std::string_view step);

}  // namespace px::snapshot
