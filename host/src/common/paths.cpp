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

namespace {

// The parts of a path's text, as std::filesystem names them: "/" for the
// root, then the names between separators; empty parts (a doubled or
// trailing separator) and "." say nothing and are skipped.
class PathParts {
 public:
  explicit PathParts(std::string_view text) : rest_(text) {}
  bool next(std::string_view& part) {
    if (first_) {
      first_ = false;
      if (!rest_.empty() && rest_.front() == '/') {
        part = rest_.substr(0, 1);
        rest_.remove_prefix(1);
        return true;
      }
    }
    while (!rest_.empty()) {
      const std::size_t end = rest_.find('/');
      part = rest_.substr(0, end);
      rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
      if (!part.empty() && part != ".") return true;
    }
    return false;
  }

 private:
  std::string_view rest_;
  bool first_ = true;
};

}  // namespace

bool is_within(const fs::path& path, const fs::path& root) {
  // A `..` anywhere makes the answer no: `<repo>/.parallex/workspaces/../../x`
  // begins with the folder's parts and names another place, and after a link
  // `a/link/..` is not even `a`, so no reading of the text says where it
  // leads. The parts are compared as text, walking both strings once: a
  // policy asks this thousands of times per run.
  PathParts p(path.native()), r(root.native());
  std::string_view a, b;
  while (r.next(b))
    if (b == ".." || !p.next(a) || a != b) return false;
  while (p.next(a))
    if (a == "..") return false;
  return true;
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
