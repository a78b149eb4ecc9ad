#pragma once
// The run's own writable caches for package managers (npm, yarn, pnpm, pip,
// uv, cargo, go, gradle, maven, bun, deno), set through the tools' own
// variables. A run whose home is the user's (an ad-hoc run) cannot write that
// home, so `npm install` would fail creating ~/.npm; and the user's own
// caches are never made writable: a cache poisoned by a run would reach the
// user's unsealed builds. An agent's run needs none of this: its home is its
// own and writable, so its tools keep their caches there, between its runs.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/origin.hpp"

namespace px::policy {

namespace fs = std::filesystem;

class PolicyBuilder;

struct ToolCacheVariable {
  const char* tool;
  const char* variable;
  const char* folder;  // the tool's folder under the caches' root
  const char* format;  // the variable's value, {} standing for that folder
  // The user's own cache for this variable, under their home: shown read-only
  // beneath the run's folder with `tool_caches: overlay`. Null where that
  // folder holds more than a cache (~/.cargo and ~/.gradle hold credentials).
  const char* users_cache;
};
const std::vector<ToolCacheVariable>& tool_cache_variables();

// The user's own tool caches under `home` (~/.npm, ~/.cache/pip, ~/.cargo...):
// never writable by a run.
std::vector<fs::path> users_own_tool_caches(const fs::path& home);

// `root_on_host`: where the caches live (granted writable unless it is the
// run's temp dir); `root_inside`: the same folder as the run sees it (/tmp/...
// inside the Linux seal). Refuses a folder that does not exist or that holds
// (or lies in) the user's own caches. `layered` (`tool_caches: overlay`, the
// run's temp dir only): each of the user's own caches that exists is shown
// read-only beneath the run's folder for that tool, its writes kept in the run.
Status apply_tool_caches(PolicyBuilder& builder, const fs::path& root_on_host, const fs::path& root_inside,
                         bool in_temp, bool layered, const fs::path& user_home, const Origin& origin);

}  // namespace px::policy
