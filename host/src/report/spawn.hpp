#pragma once
// Runs a helper program (ssh-keygen) with stdin from a file and collects what
// it prints. No shell is involved; stderr is merged into the captured output.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::report {

struct Captured {
  int exit_status = -1;  // 128+N for a signal
  std::string output;    // stdout and stderr, cut at 64 KiB
};

Result<Captured> run_capture(const std::vector<std::string>& argv, const std::filesystem::path& stdin_file);

}  // namespace px::report
