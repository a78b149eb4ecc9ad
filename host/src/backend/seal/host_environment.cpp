#include "backend/seal/host_environment.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/paths.hpp"

namespace px::seal {

extern const char* const kAppArmorProfileTemplate;

namespace fs = std::filesystem;

namespace {

constexpr const char* kSysctl = "kernel.apparmor_restrict_unprivileged_userns";
// Where the package installs the executable and its profile (cmake/ParallexPackaging.cmake).
constexpr const char* kInstalledExe = "/usr/bin/parallex";
constexpr const char* kInstalledProfile = "/etc/apparmor.d/parallex";
constexpr const char* kShippedProfile = "/usr/share/parallex/apparmor/parallex";

fs::path under_root(const std::string& absolute) {
  return host_view_root() / absolute.substr(1);
}

// The first line of a file under the host view root; empty when unreadable.
std::string first_line(const std::string& absolute) {
  std::ifstream in(under_root(absolute));
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\0')) line.pop_back();
  return line;
}

std::string whole_file(const std::string& absolute) {
  std::ifstream in(under_root(absolute));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& absolute) {
  std::error_code ec;
  return fs::exists(under_root(absolute), ec);
}

// The profile name for a parallex outside /usr/bin: its path with '/' as '.',
// AppArmor's own convention (usr.bin.parallex), so two build trees never share one.
std::string profile_name_for(const fs::path& exe) {
  std::string name = exe.relative_path().string();
  for (auto& c : name) {
    if (c == '/')
      c = '.';
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      c = '_';  // a name, and a file name in /etc/apparmor.d: no blanks, no quotes
  }
  return name;
}

// A path as a word of a shell command line (quoted only where it must be).
std::string shell_word(const std::string& path) {
  if (path.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+") ==
      std::string::npos)
    return path;
  std::string out = "'";
  for (char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string fix_for(const UsernsRestriction& r) {
  std::string fix;
  if (r.exe == kInstalledExe) {
    if (exists(kInstalledProfile))
      fix = "load the package's profile: sudo apparmor_parser -r " + std::string(kInstalledProfile);
    else
      fix = "install and load the package's profile: sudo install -m 644 " + std::string(kShippedProfile) +
            " " + kInstalledProfile + " && sudo apparmor_parser -r " + kInstalledProfile;
  } else {
    const std::string file = "/etc/apparmor.d/" + profile_name_for(r.exe);
    fix = "give this executable a profile of its own: " + shell_word(r.exe.string()) +
          " check --apparmor-profile | sudo tee " + shell_word(file) + " && sudo apparmor_parser -r " +
          shell_word(file);
    if (r.profile_loaded)
      fix += " (the loaded profile \"parallex\" is for " + std::string(kInstalledExe) + " only)";
  }
  return fix + "; or lift the restriction for every program until the next boot: sudo sysctl -w " + kSysctl +
         "=0";
}

}  // namespace

fs::path host_view_root() {
  if (const char* root = std::getenv("PARALLEX_TEST_HOST_ROOT");
      root && *root && fs::path(root).is_absolute())
    return root;
  return "/";
}

UsernsRestriction userns_restriction() {
  UsernsRestriction r;
  r.exe = parallex_executable();
  // The restriction is AppArmor's: with AppArmor off at boot it restricts nothing.
  const std::string enabled = first_line("/sys/module/apparmor/parameters/enabled");
  r.restricted =
      first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" && enabled != "N";
  if (!r.restricted) return r;
  r.label = first_line("/proc/self/attr/apparmor/current");
  if (r.label.empty()) r.label = first_line("/proc/self/attr/current");
  std::istringstream profiles(whole_file("/sys/kernel/security/apparmor/profiles"));
  for (std::string line; std::getline(profiles, line);)
    if (line.rfind("parallex ", 0) == 0) r.profile_loaded = true;
  // Root (CAP_SYS_ADMIN in the first user namespace) is exempt; so is a
  // process under a profile, which decides for itself (ours allows userns).
  const bool unconfined = r.label.empty() || r.label == "unconfined";
  r.applies = ::geteuid() != 0 && unconfined;
  if (r.applies)
    r.reason = "AppArmor restricts unprivileged user namespaces here (" + std::string(kSysctl) +
               "=1) and no profile lets " + r.exe.string() + " create one (its AppArmor label is \"" +
               (r.label.empty() ? "unconfined" : r.label) + "\"). Fix: " + fix_for(r) + ".";
  return r;
}

std::string apparmor_profile_for(const fs::path& exe) {
  std::string text = kAppArmorProfileTemplate;
  const std::string placeholder = "@PARALLEX_APPARMOR_EXE@";
  // AppArmor takes a path with blanks or quotes only in double quotes.
  std::string path = exe.string();
  if (path.find_first_of(" \t\"") != std::string::npos) {
    std::string quoted = "\"";
    for (char c : path) quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
    path = quoted + "\"";
  }
  for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at))
    text.replace(at, placeholder.size(), path);
  // Its own name, so it never replaces the package's profile.
  const std::string header = "profile parallex ";
  if (const auto at = text.find(header); at != std::string::npos && exe != kInstalledExe)
    text.replace(at, header.size(), "profile " + profile_name_for(exe) + " ");
  const std::string local = "<local/parallex>";
  if (const auto at = text.find(local); at != std::string::npos && exe != kInstalledExe)
    text.replace(at, local.size(), "<local/" + profile_name_for(exe) + ">");
  return text;
}

HostEnvironment detect_environment(bool userns_works, int landlock_abi, bool cgroup2) {
  HostEnvironment env;
  env.kind = "host";
  env.name = "a Linux host";
  const std::string release = first_line("/proc/sys/kernel/osrelease");
  const std::string version = first_line("/proc/version");
  const bool microsoft = release.find("Microsoft") != std::string::npos ||
                         release.find("microsoft") != std::string::npos ||
                         version.find("Microsoft") != std::string::npos;
  const bool wsl2 =
      release.find("WSL2") != std::string::npos || release.find("microsoft-standard") != std::string::npos;
  if (microsoft && !wsl2) {
    // WSL 1 translates Linux calls on Windows' kernel: no namespaces, no
    // Landlock, no seccomp, so no seal at all.
    env.kind = "wsl1";
    env.name = "WSL 1 (Windows' translation of Linux calls, kernel " + release + ")";
    env.supported = false;
    env.costs.push_back(
        "WSL 1 is not supported: it has no namespaces, Landlock or seccomp, so no seal can be built. Convert "
        "the "
        "distribution to WSL 2 (wsl --set-version <distribution> 2, in Windows) and run Parallex there.");
    return env;
  }
  if (microsoft) {
    env.kind = "wsl2";
    env.name = "WSL 2 (a Linux kernel in a Windows VM, " + release + ")";
    env.costs.push_back(
        "files under /mnt/c and the other Windows drives are shared with Windows: the seal governs what a "
        "run does "
        "to them, not what Windows programs do. Keep the folders runs work in inside the Linux filesystem.");
  } else {
    std::string container;
    if (exists("/.dockerenv")) container = "docker";
    if (exists("/run/.containerenv")) container = "podman";
    if (const std::string marker = first_line("/run/systemd/container"); !marker.empty()) container = marker;
    if (container.empty()) {
      const std::string cgroup = whole_file("/proc/1/cgroup");
      for (const char* hint : {"docker", "kubepods", "lxc", "containerd"})
        if (cgroup.find(hint) != std::string::npos) container = hint;
    }
    if (!container.empty()) {
      env.kind = "container";
      env.name = "a container (" + container + ")";
    }
  }
  if (env.kind == "container" && !userns_works)
    env.costs.push_back(
        "this container does not let Parallex make namespaces (its seccomp or AppArmor profile, or no "
        "CAP_SYS_ADMIN), so the seal's mount, network and pid namespaces cannot be made: `run` refuses, or "
        "with "
        "--allow-weaker-seal runs under Landlock and seccomp alone, without private mounts, network "
        "namespace or pid "
        "namespace. For the full seal the container needs a seccomp profile that allows the seal's "
        "namespaces (`parallex check --seccomp-profile > parallex.json`), /proc unmasked and no AppArmor "
        "profile that forbids mounts: docker run --security-opt seccomp=parallex.json --security-opt "
        "systempaths=unconfined --security-opt apparmor=unconfined (podman: unmask=ALL for "
        "systempaths); Kubernetes: hostUsers: false, seccompProfile Localhost parallex.json, procMount: "
        "Unmasked (`parallex kube` renders it). Or accept the seal without namespaces once: "
        "PARALLEX_ALLOW_WEAKER_SEAL=1 in the image's environment.");
  if (const UsernsRestriction r = userns_restriction(); r.applies)
    env.costs.push_back(
        "Ubuntu's restriction of unprivileged user namespaces applies to this executable: without a user "
        "namespace there is no seal, so `run` refuses; the fix is under the user namespace guarantee below.");
  if (landlock_abi == 0)
    env.costs.push_back(
        "this kernel has no Landlock (Linux before 5.13, or landlock missing from the lsm= boot parameter): "
        "the "
        "allowlist that keeps a run out of every file not granted is missing, so `run` refuses unless "
        "--allow-weaker-seal (then only the mount namespace's hiding of secret paths applies).");
  else if (landlock_abi < 6)
    env.costs.push_back(
        "Landlock ABI " + std::to_string(landlock_abi) +
        ": some of Landlock's rules are missing (the guarantees marked MISSING below; Linux 6.12 "
        "has them all); the namespaces still confine the network and other processes.");
  if (!cgroup2)
    env.costs.push_back(
        "no cgroup v2: the kill switch tracks a run's processes one by one (a subreaper), so a process that "
        "double-forks out of reach between two looks escapes a pause; mount cgroup2 to close that gap.");
  return env;
}

}  // namespace px::seal
