#include "policy/own_state.hpp"

#include <algorithm>

#include "common/paths.hpp"
#include "policy/policy_builder.hpp"

namespace px::policy {

namespace {

constexpr const char* kReason =
    "Parallex's own state (agents' rules, keys, tokens, snapshots, run records, profiles, control sockets): "
    "never reachable from a run";

// Denies `dir`, or, when a kept path lies inside it, each of its entries
// that is not on the way to one (recursively).
void deny_except(PolicyBuilder& b, const fs::path& dir, const std::vector<fs::path>& keep, int depth) {
  const bool holds_kept =
      std::any_of(keep.begin(), keep.end(), [&](const fs::path& k) { return is_within(k, dir); });
  if (!holds_kept) {
    b.deny(dir, kReason, Origin::builtin("Parallex's own state"));
    return;
  }
  if (std::any_of(keep.begin(), keep.end(), [&](const fs::path& k) { return k == dir; })) return;
  if (depth > 8) return;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    deny_except(b, it->path(), keep, depth + 1);
}

}  // namespace

std::vector<fs::path> own_state_roots() {
  return {parallex_data_dir(), parallex_runtime_dir(), parallex_config_dir(), parallex_state_dir()};
}

void deny_own_state(PolicyBuilder& b, const OwnState& state) {
  std::vector<fs::path> keep;
  for (const auto& k : state.keep) keep.push_back(normal_absolute(k));
  for (const auto& raw : state.roots) {
    const fs::path root = normal_absolute(raw);
    std::error_code ec;
    if (!fs::exists(root, ec)) {
      // Not there yet: denied as a whole (nothing of the run's own can be in it).
      if (std::none_of(keep.begin(), keep.end(), [&](const fs::path& k) { return is_within(k, root); }))
        b.deny(root, kReason, Origin::builtin("Parallex's own state"));
      continue;
    }
    deny_except(b, root, keep, 0);
  }
}

Status check_run_folder_outside_own_state(const fs::path& run_folder, const OwnState& state) {
  const fs::path folder = normal_absolute(run_folder);
  for (const auto& k : state.keep)
    if (is_within(folder, normal_absolute(k))) return ok();
  for (const auto& root : state.roots)
    if (is_within(folder, normal_absolute(root)))
      return Error::invalid("the run folder " + folder.string() + " lies inside Parallex's own state (" +
                            normal_absolute(root).string() +
                            "), which no run may reach; work in a folder of your own (--in DIR)");
  return ok();
}

}  // namespace px::policy
