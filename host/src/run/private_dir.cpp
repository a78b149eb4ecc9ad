#include "run/private_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/paths.hpp"
#include "common/remove_tree.hpp"

namespace px::run {

fs::path private_dirs_base() {
  return parallex_runtime_dir() / "runs-private";
}

Result<PrivateDir> make_private_dir() {
  const fs::path runtime = parallex_runtime_dir();
  const fs::path base = private_dirs_base();
  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec) return Error::io("create " + base.string(), ec.value());
  // The runtime dir holds control sockets and private dirs: the user's alone.
  ::chmod(runtime.c_str(), 0700);
  ::chmod(base.c_str(), 0700);
  std::string made = (base / ".new-XXXXXX").string();
  if (!::mkdtemp(made.data())) return Error::io("create a private dir under " + base.string(), errno);
  const auto drop = [&] {
    std::error_code ignored;
    fs::remove_all(made, ignored);
  };
  auto lock =
      std::make_shared<UniqueFd>(::open(made.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!*lock || ::flock(lock->get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    drop();
    return Error::io("lock the run's private dir " + made, err);
  }
  if (::mkdirat(lock->get(), "tmp", 0700) != 0) {
    const int err = errno;
    drop();
    return Error::io("create " + made + "/tmp", err);
  }
  // Its final name, taken from the temporary one (never replacing a dir).
  const std::string suffix = fs::path(made).filename().string().substr(5);
  for (int attempt = 0;; ++attempt) {
    const fs::path dir = base / ("run-" + (attempt ? suffix + std::to_string(attempt) : suffix));
    if (::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0)
      return PrivateDir{dir, std::move(lock)};
    if (errno != EEXIST || attempt > 100) {
      const int err = errno;
      drop();
      return Error::io("name the run's private dir " + dir.string(), err);
    }
  }
}

std::vector<std::string> sweep_private_dirs(int base_fd) {
  std::vector<std::string> removed;
  DIR* d = ::fdopendir(::fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
  if (!d) return removed;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("run-", 0) == 0) names.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : names) {
    UniqueFd dir(::openat(base_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    // Held: a live run's. The lock stays ours while the dir is removed.
    if (!dir || ::flock(dir.get(), LOCK_EX | LOCK_NB) != 0) continue;
    if (remove_tree_at(base_fd, name)) removed.push_back(name);
  }
  return removed;
}

std::vector<std::string> sweep_private_dirs() {
  UniqueFd base(::open(private_dirs_base().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!base) return {};
  return sweep_private_dirs(base.get());
}

}  // namespace px::run
