#pragma once
// Cgroups delegated to the unprivileged user, for the escape suite's row of
// "a user with a delegated cgroup": what systemd's Delegate=yes gives a user's
// scope (a cgroup the user owns, with its cgroup.procs, cgroup.threads and
// cgroup.subtree_control), made by root in the cgroup v2 hierarchy and, where
// one is mounted, in the v1 pids hierarchy (on a hybrid layout cgroup v2
// holds no controller: the pids controller a user can be given is v1's). A
// pass enters them before it becomes the user; they are removed afterwards.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "unprivileged_user.hpp"

namespace px::test {

class DelegatedCgroups {
 public:
  // Made for `user` (as root); `error()` says why not.
  explicit DelegatedCgroups(const UnprivilegedUser& user);
  // Kills what is left in them and removes them (their sub-cgroups too).
  ~DelegatedCgroups();
  DelegatedCgroups(const DelegatedCgroups&) = delete;
  DelegatedCgroups& operator=(const DelegatedCgroups&) = delete;

  const std::string& error() const { return error_; }
  // What was made, in words, for the pass's output.
  std::string describe() const;
  // In the forked child, before it becomes the user: moves it into each.
  // Returns "" or what failed.
  std::string enter() const;

 private:
  std::vector<std::filesystem::path> dirs_;
  std::string error_;
};

}  // namespace px::test
