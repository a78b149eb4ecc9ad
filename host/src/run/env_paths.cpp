#include "run/env_paths.hpp"

#include <algorithm>
#include <cstdlib>

#include "common/paths.hpp"

namespace px::run {

namespace fs = std::filesystem;

std::vector<fs::path> paths_named(const std::string& value) {
  std::vector<fs::path> out;
  auto consider = [&](std::string word) {
    if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') && word.back() == word.front())
      word = word.substr(1, word.size() - 2);
    if (const auto eq = word.find('='); eq != std::string::npos && word.front() == '-')
      word = word.substr(eq + 1);
    if (word.empty() || (word.front() != '/' && word.rfind("~/", 0) != 0)) return;
    const fs::path p = normal_absolute(expand_home(word, user_home()));
    std::error_code ec;
    if (fs::exists(p, ec) && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  std::string word;
  for (const char c : value + " ") {
    if (c == ' ' || c == '\t' || c == ':' || c == '\n') {
      consider(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

namespace {

// `said` names the variable as the user gave it: "--env NAME", or "NAME
// (kept from your environment)".
void say_unreadable(const std::string& said, const std::string& name, const std::string& value,
                    const policy::Policy& policy, std::vector<Notice>& notices, bool files_only = false) {
  for (const auto& path : paths_named(value)) {
    std::error_code ec;
    if (files_only && !fs::is_regular_file(path, ec)) continue;
    const policy::Decision d = policy.explain_read(path);
    if (d.allowed) continue;
    const bool denied = d.rule.rfind("deny", 0) == 0;
    notices.push_back(
        {NoticeKind::environment,
         said + " names " + path.string() + ", which the run may not read" +
             (denied ? " (" + d.rule + "; no --grant opens it): pass another file, or leave " + name + " out"
                     : ": grant it with --grant " + path.string())});
  }
}

}  // namespace

void say_unreadable_env_paths(const std::vector<std::string>& env_flags, const policy::Policy& policy,
                              std::vector<Notice>& notices) {
  for (const auto& spec : env_flags) {
    const auto eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    const char* from_env = eq == std::string::npos ? std::getenv(name.c_str()) : nullptr;
    const std::string value = eq != std::string::npos ? spec.substr(eq + 1) : from_env ? from_env : "";
    say_unreadable("--env " + name, name, value, policy, notices);
  }
}

void say_unreadable_kept_paths(const std::map<std::string, std::string>& run_env,
                               const std::map<std::string, std::string>& host_env,
                               const std::set<std::string>& already_said, const policy::Policy& policy,
                               std::vector<Notice>& notices) {
  for (const auto& [name, value] : run_env) {
    if (name == "PATH" || name == "HOME" || already_said.count(name)) continue;
    // Only the user's own value: one the policy sets (TMPDIR, an agent's HOME) is the run's.
    const auto host = host_env.find(name);
    if (host == host_env.end() || host->second != value) continue;
    // A kept folder (CARGO_HOME, GOPATH) is meant to be open in part (its
    // bin, never its credentials); a file is read whole, or not at all.
    say_unreadable(name + " (kept from your environment)", name, value, policy, notices,
                   /*files_only=*/name != "SSL_CERT_DIR");
  }
}

}  // namespace px::run
