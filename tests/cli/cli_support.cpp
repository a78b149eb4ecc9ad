#include "cli_support.hpp"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "spawn.hpp"
#include "test_paths.hpp"
#include "unprivileged_user.hpp"

namespace px::cli_test {

namespace {

using ::px::test::slurp;

}  // namespace

std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Folder::Folder() {
  char templ[] = "/tmp/px-cli-test-XXXXXX";
  path = ::mkdtemp(templ);
  // The unprivileged user reads and writes in it too.
  fs::permissions(path, fs::perms::all);
}

Folder::~Folder() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

bool have_unprivileged_user() {
  return test::unprivileged_user().has_value();
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

Ran sh(const std::string& command, const std::map<std::string, std::string>& env, bool as_user) {
  Folder io;
  std::string line = "env";
  for (const auto& [k, v] : env) line += " " + k + "=" + q(v);
  line += " sh -c " + q(command);
  line += " </dev/null >" + (io.path / "out").string() + " 2>" + (io.path / "err").string();
  Ran r;
  int raw = -1;
  if (!as_user) {
    raw = std::system(line.c_str());
  } else if (const auto user = test::unprivileged_user(); !user) {
    return Ran{125, "", "no unprivileged user pxtest"};
  } else if (const pid_t child = ::fork(); child == 0) {
    if (const auto why = test::become(*user); !why.empty()) {
      std::fprintf(stderr, "cannot become pxtest: %s\n", why.c_str());
      ::_exit(125);
    }
    ::execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
    ::_exit(127);
  } else if (child < 0 || ::waitpid(child, &raw, 0) != child) {
    return Ran{125, "", "cannot start the command as pxtest"};
  }
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(io.path / "out");
  r.err = slurp(io.path / "err");
  return r;
}

Ran px(const std::string& args, const fs::path& home, const std::map<std::string, std::string>& env,
       bool as_user) {
  std::map<std::string, std::string> all = env;
  all.emplace("PARALLEX_HOME", (home / "px").string());
  all.emplace("XDG_RUNTIME_DIR", (home / "runtime").string());
  fs::create_directories(home / "runtime");
  fs::permissions(home / "runtime", fs::perms::owner_all);
  if (as_user) {
    fs::create_directories(home / "px");
    if (std::system(("chown -R pxtest " + q(home.string())).c_str()) != 0)
      return Ran{125, "", "cannot hand " + home.string() + " to pxtest"};
  }
  return sh(std::string(PARALLEX_EXE) + " " + args, all, as_user);
}

}  // namespace px::cli_test
