#include "policy/own_state.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "common/paths.hpp"
#include "policy/policy_builder.hpp"

namespace px::policy {

namespace {

constexpr const char* kReason =
    "Parallex's own state (agents' rules, keys, tokens, snapshots, run records, profiles, control sockets): "
    "never reachable from a run";
constexpr const char* kFixedReason =
    "Parallex's own state, holding a path the run keeps: no entry is added, removed or renamed";

// Denies `dir`, or, when a kept path lies inside it, each of its entries
// that is not on the way to one (recursively), and fixes its entries: a
// writable grant around it must not let the run add one (a `plugins/` in the
// data dir, a profile in the config dir), which the next `parallex` reads.
void deny_except(PolicyBuilder& b, const fs::path& dir, const std::vector<fs::path>& keep, int depth) {
  const bool holds_kept =
      std::any_of(keep.begin(), keep.end(), [&](const fs::path& k) { return is_within(k, dir); });
  if (!holds_kept) {
    b.deny(dir, kReason, Origin::builtin("Parallex's own state"));
    return;
  }
  if (std::any_of(keep.begin(), keep.end(), [&](const fs::path& k) { return k == dir; })) return;
  std::vector<fs::path> open;
  for (const auto& k : keep)
    if (is_within(k, dir)) open.push_back(dir / *k.lexically_relative(dir).begin());
  std::sort(open.begin(), open.end());
  open.erase(std::unique(open.begin(), open.end()), open.end());
  b.fixed_entries(dir, open, kFixedReason, Origin::builtin("Parallex's own state"));
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
      // Not there (make_own_state_roots could not make it): denied as a whole,
      // which holds only where no writable grant covers it.
      if (std::none_of(keep.begin(), keep.end(), [&](const fs::path& k) { return is_within(k, root); }))
        b.deny(root, kReason, Origin::builtin("Parallex's own state"));
      continue;
    }
    deny_except(b, root, keep, 0);
  }
}

Status make_own_state_roots(const OwnState& state, const Policy& policy) {
  for (const auto& raw : state.roots) {
    const fs::path root = normal_absolute(raw);
    std::error_code ec;
    if (fs::is_directory(root, ec)) continue;
    const bool reachable =
        std::any_of(policy.grants().begin(), policy.grants().end(),
                    [&](const PathGrant& g) { return g.access == Access::write && is_within(root, g.path); });
    if (!reachable) continue;  // the run cannot make it: nothing is made in the user's home
    fs::create_directories(root.parent_path(), ec);
    if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
      return Error::io("cannot make Parallex's own folder " + root.string() +
                           " (a run must find it there to be kept out of it; make it, mode 0700)",
                       errno);
  }
  return ok();
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
