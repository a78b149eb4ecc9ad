#pragma once
// Where Parallex runs, as far as the seal is concerned: Ubuntu's AppArmor
// restriction of unprivileged user namespaces, a container, WSL 1 or 2, a
// kernel without Landlock, and what each costs. `parallex check` names it;
// detect_guarantees() turns the AppArmor restriction into the user namespace
// guarantee's reason, so `run` refuses with the same words.
#include <filesystem>
#include <string>
#include <vector>

namespace px::seal {

// The files this detection reads (/proc/sys/kernel/..., /proc/self/attr/...,
// /sys/kernel/security/apparmor/..., /etc/apparmor.d/..., /proc/version, the
// container markers) are read under this root: "/" unless
// PARALLEX_TEST_HOST_ROOT names a folder of fake copies. Only this detection
// reads it: it changes what `check` and `run` say, never what the seal does,
// so a forged value can at worst make `run` refuse or fail later as it would
// without the detection.
std::filesystem::path host_view_root();

struct UsernsRestriction {
  bool restricted = false;      // kernel.apparmor_restrict_unprivileged_userns=1, AppArmor on
  bool applies = false;         // restricted, and this process is neither root nor under a profile
  std::string label;            // this process's AppArmor label: "unconfined", "parallex (unconfined)"
  bool profile_loaded = false;  // a profile named "parallex" is loaded in the kernel
  std::filesystem::path exe;    // this executable
  std::string reason;           // when it applies: what is wrong and the exact fix, one paragraph
};

// Reads the sysctl and this process's AppArmor label (no fork, no namespace).
UsernsRestriction userns_restriction();

// The AppArmor profile that lets `exe` create user namespaces and nothing
// else (packaging/apparmor/parallex.in), for a parallex outside /usr/bin.
std::string apparmor_profile_for(const std::filesystem::path& exe);

struct HostEnvironment {
  std::string kind;                // "host", "container", "wsl1", "wsl2"
  std::string name;                // in words: "WSL 2", "a container (docker)"
  std::vector<std::string> costs;  // what the environment takes from the seal, one line each
  bool supported = true;           // false for WSL 1: no seal can be built there
};

// `userns_works`, `landlock_abi`, `cgroup2`: what detect_guarantees() found.
HostEnvironment detect_environment(bool userns_works, int landlock_abi, bool cgroup2);

}  // namespace px::seal
