#include "common/paths.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>
#include <vector>

extern char** environ;

namespace px {

fs::path user_home() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  return account_home();
}

fs::path account_home() {
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir) return pw->pw_dir;
  return "/";
}

namespace {

// The XDG base directory `variable` (used only when absolute, as the
// specification says), else `fallback` under the home; PARALLEX_HOME first.
fs::path xdg_dir(const char* variable, const char* fallback) {
  if (const char* p = std::getenv("PARALLEX_HOME"); p && *p) return normal_absolute(p);
  if (const char* x = std::getenv(variable); x && *x && fs::path(x).is_absolute())
    return fs::path(x) / "parallex";
  return user_home() / fallback / "parallex";
}

}  // namespace

fs::path parallex_data_dir() {
  return xdg_dir("XDG_DATA_HOME", ".local/share");
}
fs::path parallex_state_dir() {
  return xdg_dir("XDG_STATE_HOME", ".local/state");
}
fs::path parallex_config_dir() {
  return xdg_dir("XDG_CONFIG_HOME", ".config");
}

fs::path agent_runs_dir(const fs::path& agent_root) {
  if (agent_root.parent_path() == parallex_data_dir() / "agents")
    return parallex_state_dir() / "agents" / agent_root.filename() / "runs";
  return agent_root / "runs";
}

fs::path parallex_runtime_dir() {
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x && fs::path(x).is_absolute())
    return fs::path(x) / "parallex";
  return fs::path("/tmp") / ("parallex-" + std::to_string(getuid()));
}

fs::path parallex_scratch_dir() {
  return parallex_runtime_dir() / "scratch";
}

fs::path parallex_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("parallex") : p;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string item(*e);
    if (const auto eq = item.find('='); eq != std::string::npos)
      env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return env;
}

fs::path expand_home(const std::string& path, const fs::path& home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home / path.substr(2);
  return path;
}

fs::path normal_absolute(const fs::path& path) {
  fs::path abs = path.is_absolute() ? path : fs::current_path() / path;
  fs::path normal = abs.lexically_normal();
  // "/a/b/" normalises to "/a/b/" (empty last element); drop it so comparisons work.
  if (normal.has_parent_path() && normal.filename().empty()) normal = normal.parent_path();
  return normal;
}

bool is_within(const fs::path& path, const fs::path& root) {
  // A `..` anywhere makes the answer no: `<repo>/.parallex/workspaces/../../x`
  // begins with the folder's parts and names another place, and after a link
  // `a/link/..` is not even `a`, so no reading of the text says where it
  // leads. `.` and empty parts (a doubled or trailing separator) say nothing.
  // The parts are compared as text: comparing a part with a literal would
  // build a path (and parse it) per part, and a policy asks this thousands of
  // times per run.
  const auto parts = [](const fs::path& p, bool& up) {
    std::vector<std::string_view> out;
    for (const auto& part : p) {
      const std::string_view text = part.native();
      if (text == "..") up = true;
      if (!text.empty() && text != ".") out.push_back(text);
    }
    return out;
  };
  bool up = false;
  const auto p = parts(path, up);
  const auto r = parts(root, up);
  if (up || p.size() < r.size()) return false;
  return std::equal(r.begin(), r.end(), p.begin());
}

std::optional<fs::path> find_executable(const std::string& name, const std::string& path_env) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0) return normal_absolute(name);
    return std::nullopt;
  }
  std::stringstream dirs(path_env);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return normal_absolute(candidate);
  }
  return std::nullopt;
}

}  // namespace px
