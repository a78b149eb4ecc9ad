#include "run/git_paths.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <set>

#include "common/git_files.hpp"
#include "common/read_file.hpp"
#include "common/unique_fd.hpp"

namespace px::run {

namespace {

constexpr int kMaxDepth = 4;

// A git file the run folder holds: written by whoever wrote the folder, so
// only a small regular file is read (never a FIFO or a device).
std::string read_text(const fs::path& file) {
  auto text = read_regular_file(file, {.max_bytes = 256 * 1024, .follow_links = false});
  return text ? std::move(text).value() : std::string();
}

bool exists_no_follow(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

void git_dir_files(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  for (const char* f : {"config", "hooks", "commondir", "config.worktree", "info/attributes"})
    if (exists_no_follow(dir / f)) out.push_back(dir / f);
  if (depth >= kMaxDepth) return;
  // Modules are named by their path ('/' allowed): a folder with HEAD is a git dir.
  std::vector<std::pair<fs::path, int>> pending{{dir / "modules", 0}};
  std::error_code ec;
  while (!pending.empty()) {
    auto [d, steps] = pending.back();
    pending.pop_back();
    if (steps > 8) continue;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
      if (exists_no_follow(it->path() / "HEAD"))
        git_dir_files(it->path(), depth + 1, out);
      else
        pending.push_back({it->path(), steps + 1});
    }
    ec.clear();
  }
}

std::vector<GitConfigEntry> gitmodules(const fs::path& run_folder) {
  bool ok = true;
  return parse_git_config(read_text(run_folder / ".gitmodules"), ok);
}

}  // namespace

std::vector<fs::path> existing_git_files(const fs::path& run_folder) {
  std::vector<fs::path> out;
  const fs::path git = run_folder / ".git";
  std::error_code ec;
  // .git is opened once, beneath the run folder and never through a link,
  // and read through that descriptor (its /proc/self/fd name: every lookup
  // starts from the folder it opened): a process outside that swaps .git
  // meanwhile cannot make this list another folder's files.
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const UniqueFd dir(
      static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, run_folder.c_str(), &how, sizeof how)));
  const UniqueFd held(dir ? ::openat(dir.get(), ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1);
  if (!held) return out;
  const fs::path base = "/proc/self/fd/" + std::to_string(held.get());
  if (!fs::is_directory(base, ec)) return out;
  std::vector<fs::path> found;
  git_dir_files(base, 0, found);
  for (fs::directory_iterator it(base / "worktrees", ec), end; !ec && it != end; it.increment(ec))
    for (const char* f : {"commondir", "config.worktree", "gitdir"})
      if (exists_no_follow(it->path() / f)) found.push_back(it->path() / f);
  for (const auto& f : found) out.push_back(git / f.lexically_relative(base));
  for (const auto& e : gitmodules(run_folder)) {
    if (!e.key.ends_with(".path") || e.value.empty()) continue;
    const fs::path path = fs::path(e.value).lexically_normal();
    if (path.is_absolute() || path.string().rfind("..", 0) == 0) continue;
    const fs::path nested = run_folder / path / ".git";
    if (fs::is_directory(fs::symlink_status(nested, ec))) git_dir_files(nested, kMaxDepth, out);
  }
  // .git/config and .git/hooks come from the profile (with its reasons).
  std::erase_if(out, [&](const fs::path& p) { return p == git / "config" || p == git / "hooks"; });
  return out;
}

std::vector<std::pair<std::string, std::string>> submodule_registrations(const fs::path& run_folder) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto modules = gitmodules(run_folder);
  if (modules.empty()) return out;
  bool ok = true;
  const auto config = parse_git_config(read_text(run_folder / ".git/config"), ok);
  std::set<std::string> known;
  std::string origin_url, any_url;
  for (const auto& e : config) {
    known.insert(e.key);
    if (e.key == "remote.origin.url") origin_url = e.value;
    if (any_url.empty() && e.key.rfind("remote.", 0) == 0 && e.key.ends_with(".url")) any_url = e.value;
  }
  // Without a remote, git resolves relative to the superproject's folder.
  const std::string base = !origin_url.empty() ? origin_url
                           : !any_url.empty()  ? any_url
                                               : run_folder.string();
  for (const auto& e : modules) {
    if (e.key.rfind("submodule.", 0) != 0 || !e.key.ends_with(".url")) continue;
    const std::string name = e.key.substr(10, e.key.size() - 10 - 4);
    if (name.empty() || known.count("submodule." + name + ".url")) continue;
    out.push_back({"submodule." + name + ".url", resolve_submodule_url(e.value, base)});
    if (!known.count("submodule." + name + ".active"))
      out.push_back({"submodule." + name + ".active", "true"});
  }
  return out;
}

void add_git_config_entries(std::map<std::string, std::string>& env,
                            const std::vector<std::pair<std::string, std::string>>& entries) {
  if (entries.empty()) return;
  int count = 0;
  if (auto it = env.find("GIT_CONFIG_COUNT"); it != env.end()) {
    try {
      count = std::stoi(it->second);
    } catch (...) {
      count = 0;
    }
  }
  for (const auto& [key, value] : entries) {
    env["GIT_CONFIG_KEY_" + std::to_string(count)] = key;
    env["GIT_CONFIG_VALUE_" + std::to_string(count)] = value;
    ++count;
  }
  env["GIT_CONFIG_COUNT"] = std::to_string(count);
}

}  // namespace px::run
