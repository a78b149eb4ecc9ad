#pragma once
// `parallex plugins --check`: a plugin that crashes in its entry point or its
// callbacks cannot be caught in-process, so each file is first loaded and
// exercised in a child process; a crash is reported by name and signal.
#include <filesystem>
#include <string>

namespace px::plugins {

struct CheckOutcome {
  std::filesystem::path path;
  bool ok = false;
  std::string detail;  // "ok", the load error, or "crashed with SIGSEGV while ..."
};

CheckOutcome check_in_child(const std::filesystem::path& file);

}  // namespace px::plugins
