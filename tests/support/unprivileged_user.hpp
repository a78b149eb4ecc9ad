#pragma once
// The unprivileged user `pxtest`, for the passes of the test suites that must
// hold for a user as well as for root (the seal, the network, the command line).

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace px::test {

struct UnprivilegedUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
};

// pxtest, created with useradd when this process is root and it does not exist
// yet; nullopt when it cannot be had.
std::optional<UnprivilegedUser> unprivileged_user();

// For a child that root has just forked: gives it a mount namespace of its own
// in which the source and build trees are reachable by `user` (a clone under
// a private folder, such as mktemp's 0700 ones, is not), then becomes the user
// (its groups, group and id). Returns "" or what failed; the host's folders
// and their modes are never changed.
std::string become(const UnprivilegedUser& user);

// This test executable run again as `user`, with only the tests `gtest_filter`
// selects and `marker` set in its environment (so the outer test can tell it
// is the inner pass). Its output is returned with the inner skip lines
// relabelled (ctest would read an inner "[  SKIPPED ]" as the outer test's own).
struct Pass {
  int status = -1;  // as waitpid gives it
  std::string output;
  int inner_skips = 0;
  bool passed() const;
};
// What a pass gets besides its user: variables set for it (a test-only
// switch: a row of the escape suite), and cgroups delegated to its user
// (delegated_cgroups.hpp), which it runs in.
struct PassOptions {
  std::vector<std::pair<std::string, std::string>> env;
  bool delegated_cgroups = false;
};
Pass rerun_self_as(const UnprivilegedUser& user, const std::string& gtest_filter, const char* marker,
                   const PassOptions& options = {});
// The same, as the caller's own user (root): a row that changes only the machine.
Pass rerun_self(const std::string& gtest_filter, const char* marker, const PassOptions& options);

}  // namespace px::test
