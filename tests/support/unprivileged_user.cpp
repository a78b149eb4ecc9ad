#include "unprivileged_user.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "delegated_cgroups.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;

namespace px::test {

namespace {

std::string failed(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool can_search(const struct stat& st, const UnprivilegedUser& user) {
  if (st.st_uid == user.uid) return (st.st_mode & S_IXUSR) != 0;
  if (st.st_gid == user.gid) return (st.st_mode & S_IXGRP) != 0;
  return (st.st_mode & S_IXOTH) != 0;
}

// Covers `dir` with a tmpfs the user can search, holding every entry of the
// folder it covers: folders and files bound from the original (reached
// through a descriptor opened before the cover), links copied. The original
// folder, its mode and its content stay as they are; only this mount
// namespace sees the cover.
std::string cover_with_searchable_copy(const fs::path& dir) {
  const int original = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (original < 0) return failed("open " + dir.string());
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.emplace_back(e->d_name);
    ::closedir(d);
  } else {
    return failed("list " + dir.string());
  }
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    return failed("cover " + dir.string());
  const std::string through = "/proc/self/fd/" + std::to_string(original) + "/";
  for (const auto& name : names) {
    const fs::path at = dir / name;
    struct stat st {};
    if (::fstatat(original, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlinkat(original, name.c_str(), target, sizeof target - 1);
      if (n < 0) return failed("read link " + at.string());
      target[n] = '\0';
      if (::symlink(target, at.c_str()) != 0) return failed("copy link " + at.string());
      continue;
    }
    const int made = S_ISDIR(st.st_mode) ? ::mkdir(at.c_str(), 0755)
                                         : ::close(::open(at.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    if (made != 0) return failed("make " + at.string());
    if (::mount((through + name).c_str(), at.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return failed("bind " + at.string());
  }
  ::close(original);
  return "";
}

std::string make_reachable(const std::vector<fs::path>& trees, const UnprivilegedUser& user) {
  // Every folder on the way to each tree, from the root down: a cover over an
  // outer folder binds the inner ones back, so they are checked after it.
  std::set<fs::path> seen;
  std::vector<fs::path> way;
  for (const auto& tree : trees) {
    std::error_code ec;
    const fs::path real = fs::canonical(tree, ec);
    if (ec) continue;
    fs::path at = "/";
    for (const auto& part : real.relative_path()) {
      at /= part;
      if (seen.insert(at).second) way.push_back(at);
    }
  }
  std::sort(way.begin(), way.end(), [](const fs::path& a, const fs::path& b) {
    return std::distance(a.begin(), a.end()) < std::distance(b.begin(), b.end());
  });
  bool unshared = false;
  for (const auto& dir : way) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || can_search(st, user)) continue;
    if (!unshared) {
      // Slave, not private: the host's later mounts still reach this pass.
      if (::unshare(CLONE_NEWNS) != 0) return failed("unshare the mount namespace");
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return failed("make / a slave");
      unshared = true;
    }
    if (auto why = cover_with_searchable_copy(dir); !why.empty()) return why;
  }
  return "";
}

}  // namespace

bool Pass::passed() const {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::optional<UnprivilegedUser> unprivileged_user() {
  const char* name = "pxtest";
  if (!::getpwnam(name) && (::getuid() != 0 || std::system("useradd -m pxtest >/dev/null 2>&1") != 0))
    return std::nullopt;
  const passwd* pw = ::getpwnam(name);
  if (!pw) return std::nullopt;
  return UnprivilegedUser{pw->pw_name, pw->pw_uid, pw->pw_gid, pw->pw_dir};
}

std::string become(const UnprivilegedUser& user) {
  if (auto why = make_reachable({PARALLEX_SOURCE_DIR, PARALLEX_BINARY_DIR}, user); !why.empty()) return why;
  if (::initgroups(user.name.c_str(), user.gid) != 0) return failed("initgroups");
  if (::setgid(user.gid) != 0) return failed("setgid");
  if (::setuid(user.uid) != 0) return failed("setuid");
  return "";
}

namespace {

// This test executable again, as `user` (or as the caller when null).
Pass rerun(const UnprivilegedUser* user, const std::string& gtest_filter, const char* marker,
           const PassOptions& options) {
  Pass pass;
  std::error_code ec;
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  const std::string filter = "--gtest_filter=" + gtest_filter;
  std::optional<DelegatedCgroups> cgroups;
  if (options.delegated_cgroups && user) {
    cgroups.emplace(*user);
    if (!cgroups->error().empty()) {
      pass.output = "cannot delegate cgroups to " + user->name + ": " + cgroups->error();
      return pass;
    }
    pass.output = cgroups->describe() + "\n";
  }
  int out[2];
  if (self.empty() || ::pipe2(out, O_CLOEXEC) != 0) {
    pass.output = "cannot start the pass: " + std::string(std::strerror(errno));
    return pass;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(out[1], STDERR_FILENO);
    std::string why = cgroups ? cgroups->enter() : "";
    if (why.empty() && user) why = become(*user);
    if (!why.empty()) {
      const std::string line =
          "cannot start the pass" + (user ? " as " + user->name : std::string()) + ": " + why + "\n";
      (void)!::write(STDERR_FILENO, line.data(), line.size());
      ::_exit(90);
    }
    ::setenv(marker, "1", 1);
    for (const auto& [name, value] : options.env) ::setenv(name.c_str(), value.c_str(), 1);
    // The pass runs every test its filter names, whichever shard of the suite
    // the test that started it ran in (scripts/test-asan.sh shards suites).
    ::unsetenv("GTEST_TOTAL_SHARDS");
    ::unsetenv("GTEST_SHARD_INDEX");
    ::unsetenv("GTEST_SHARD_STATUS_FILE");
    if (user) {
      ::setenv("HOME", user->home.c_str(), 1);
      ::setenv("USER", user->name.c_str(), 1);
    }
    ::setenv("TMPDIR", "/tmp", 1);
    ::execl(self.c_str(), self.c_str(), filter.c_str(), nullptr);
    ::_exit(91);
  }
  ::close(out[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) pass.output.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  ::waitpid(child, &pass.status, 0);
  for (std::size_t at = pass.output.find("[  SKIPPED ]"); at != std::string::npos;
       at = pass.output.find("[  SKIPPED ]", at)) {
    pass.output.replace(at, 12, "[ skipped  ]");
    ++pass.inner_skips;
  }
  return pass;
}

}  // namespace

Pass rerun_self_as(const UnprivilegedUser& user, const std::string& gtest_filter, const char* marker,
                   const PassOptions& options) {
  return rerun(&user, gtest_filter, marker, options);
}

Pass rerun_self(const std::string& gtest_filter, const char* marker, const PassOptions& options) {
  return rerun(nullptr, gtest_filter, marker, options);
}

}  // namespace px::test
