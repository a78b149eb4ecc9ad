#pragma once
// `--unsealed`: the command runs as a plain child, with the policy's
// environment and nothing else. Kept apart so the sealed path never shares code
// that could quietly skip a step.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::supervisor {

// The command's exit status (128+N for signal N, 127 when not found).
Result<int> run_unsealed(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         const std::filesystem::path& cwd, int cgroup_fd = -1);

}  // namespace px::supervisor
