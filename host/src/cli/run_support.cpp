#include "cli/run_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "common/paths.hpp"
#ifdef PX_HAVE_SUPERVISOR
#include "supervisor/registry.hpp"
#endif

extern char** environ;

namespace px::cli {

std::map<std::string, std::string> host_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string item(*e);
    if (const auto eq = item.find('='); eq != std::string::npos) env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return env;
}

Result<fs::path> make_run_temp() {
  const fs::path runtime = parallex_runtime_dir();
  const fs::path base = runtime / "tmp";
  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec) return Error::io("cannot create " + base.string(), ec.value());
  // The runtime dir holds control sockets and temp dirs: the user's alone.
  ::chmod(runtime.c_str(), 0700);
  ::chmod(base.c_str(), 0700);
  std::string templ = (base / "run-XXXXXX").string();
  if (!::mkdtemp(templ.data())) return Error::io("cannot create a temp dir under " + base.string(), errno);
  return fs::path(templ);
}

fs::path adhoc_runs_dir() {
  return parallex_state_dir() / "runs";
}

bool agent_is_running(const std::string& name) {
#ifdef PX_HAVE_SUPERVISOR
  return supervisor::agent_has_live_run(parallex_runtime_dir(), name);
#else
  (void)name;
  return false;
#endif
}

}  // namespace px::cli
