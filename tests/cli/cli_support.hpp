#pragma once
// Runs the real `parallex` (or a shell) and collects what it printed.
#include <filesystem>
#include <map>
#include <string>

namespace px::cli_test {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string out, err;
};

// Runs `argv0 args` through sh -c with `env` added, stdin from /dev/null.
// `as_user`: as the unprivileged user pxtest (created when missing; the
// test is skipped where it cannot be).
Ran sh(const std::string& command, const std::map<std::string, std::string>& env = {}, bool as_user = false);
// `parallex ARGS` with PARALLEX_HOME and XDG_RUNTIME_DIR in `home`.
Ran px(const std::string& args, const fs::path& home, const std::map<std::string, std::string>& env = {},
       bool as_user = false);
// Single-quoted for sh.
std::string q(const std::string& s);
// A fresh folder under /tmp, removed at exit of the test's Folder.
struct Folder {
  Folder();
  ~Folder();
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  fs::path path;
};
// Creates the user pxtest when missing; false where that is impossible (not root).
bool have_unprivileged_user();
void write(const fs::path& file, const std::string& text);

}  // namespace px::cli_test
