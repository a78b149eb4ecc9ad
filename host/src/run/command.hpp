#pragma once
// The command a run starts: argv[0] found on the run's own PATH, and (for a
// sealed run) readable under its policy. When it is not, the advice names the
// smallest grant that makes it runnable, checked before it is printed.
#include <filesystem>
#include <functional>
#include <string>

#include "policy/policy.hpp"
#include "run/plan.hpp"

namespace px::run {

namespace fs = std::filesystem;

// Whether the policy with one more read grant lets the run read `paths`: the
// caller composes that policy (the grant goes through the same builder).
using GrantCheck = std::function<bool(const fs::path& grant, const std::vector<fs::path>& paths)>;

struct ResolvedCommand {
  fs::path path;                                  // as found on PATH (may be a link)
  std::optional<CommandProblem> problem;          // not found, or not readable under the policy
};

// `policy` null: an unsealed run, only PATH matters.
ResolvedCommand resolve_command(const std::string& name, const std::string& path_env, const policy::Policy* policy,
                                const GrantCheck& check);

}  // namespace px::run
