#include "run/command.hpp"

#include <optional>
#include <sstream>
#include <vector>

#include "common/paths.hpp"

namespace px::run {

namespace {

// The deepest folder that holds both paths.
fs::path common_ancestor(const fs::path& a, const fs::path& b) {
  fs::path out;
  auto ia = a.begin(), ib = b.begin();
  for (; ia != a.end() && ib != b.end() && *ia == *ib; ++ia, ++ib) out /= *ia;
  return out;
}

// Why `name` names a file that exists but cannot be run (a folder, a file
// without execute permission), or nothing when there is no such file.
std::optional<std::string> why_not_executable(const std::string& name, const std::string& path_env) {
  std::vector<fs::path> candidates;
  if (name.find('/') != std::string::npos) {
    candidates.push_back(name);
  } else {
    std::stringstream dirs(path_env);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) candidates.push_back(fs::path(dir) / name);
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    const auto st = fs::status(c, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_directory(st)) return "cannot run " + c.string() + ": it is a folder";
    return "cannot run " + c.string() +
           ": it is not executable (no execute permission for you); run it with its " +
           "interpreter (e.g. sh " + c.string() + ") or make it executable (chmod +x)";
  }
  return std::nullopt;
}

}  // namespace

ResolvedCommand resolve_command(const std::string& name, const std::string& path_env, const policy::Policy* policy,
                                const GrantCheck& check) {
  ResolvedCommand out;
  const auto found = find_executable(name, path_env);
  if (!found) {
    // There but not runnable is the shell's 126, not 127: say which and why.
    if (auto why = why_not_executable(name, path_env)) {
      out.problem = CommandProblem{RunStatus::not_executable, *why};
      return out;
    }
    out.problem = CommandProblem{RunStatus::not_found,
                                 "command not found: " + name +
                                     (name.find('/') == std::string::npos ? " (searched the run's PATH=" + path_env + ")"
                                                                          : " (no such executable file)")};
    return out;
  }
  out.path = *found;
  if (!policy) return out;
  std::error_code ec;
  const fs::path real = fs::canonical(*found, ec);
  std::vector<fs::path> needed{*found};
  if (!ec && real != *found) needed.push_back(real);
  const fs::path* unreadable = nullptr;
  for (const auto& p : needed)
    if (!policy->may_read(p)) {
      unreadable = &p;
      break;
    }
  if (!unreadable) return out;

  // The smallest grant that makes the whole command readable: the folder
  // holding the link and what it points to (an npm `node_modules`, whose
  // .bin links point into the packages, platform packages beside them), but
  // never the home folder or the root; checked against the policy with it.
  const std::string shown = found->string() + (needed.size() > 1 ? " (-> " + real.string() + ")" : "");
  const fs::path home = policy->user_home();
  std::string advice;
  const fs::path ancestor = common_ancestor(needed.front().parent_path(), needed.back().parent_path());
  const bool ancestor_usable = !ancestor.empty() && ancestor != "/" && !is_within(home, ancestor);
  if (check && ancestor_usable && check(ancestor, needed)) {
    advice = "; grant it with --grant " + ancestor.string() + " (checked: with it the command can be read)";
  } else if (check) {
    // The link and its target share no folder of their own: one grant each.
    std::string grants;
    bool verified = true;
    for (const auto& p : needed) {
      grants += (grants.empty() ? "--grant " : " --grant ") + p.parent_path().string();
      verified = verified && check(p.parent_path(), {p});
    }
    advice = verified ? "; grant it with " + grants + " (checked: with them the command can be read)"
                      : "; no grant makes it readable here (a deny covers it): see `parallex policy show --why " +
                            unreadable->string() + "`";
  }
  out.problem = CommandProblem{RunStatus::not_executable, name + " is " + shown + ", which this run may not read (" +
                                                              policy->explain_read(*unreadable).rule + ")" + advice};
  return out;
}

}  // namespace px::run
