#include "run_harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "broker_harness.hpp"
#include "test_paths.hpp"

namespace px::broker::test {

namespace fs = std::filesystem;

std::vector<nlohmann::json> json_lines(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(p));
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(nlohmann::json::parse(l, nullptr, false));
  return out;
}

RunFolder::RunFolder() {
  // Under the build folder, not /tmp: the run's /tmp is its own, and Codex
  // refuses to set up its helpers under a temp dir.
  std::string templ = (fs::path(PARALLEX_BINARY_DIR) / "broker-run-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return;
  root_ = fs::canonical(templ);
  for (const char* d : {"home", "userhome", "runtime", "work", "logs", "secrets"}) {
    fs::create_directories(root_ / d);
    ::chmod((root_ / d).c_str(), 0700);
  }
  std::string outside = (fs::temp_directory_path() / "px-profiles-XXXXXX").string();
  if (::mkdtemp(outside.data()) != nullptr) profiles_ = fs::canonical(outside);
}

RunFolder::~RunFolder() {
  std::error_code ec;
  if (!keep_ && !::testing::Test::HasFailure()) {
    fs::remove_all(root_, ec);
    if (!profiles_.empty()) fs::remove_all(profiles_, ec);
  } else {
    std::printf("[ kept ] %s and %s\n", root_.c_str(), profiles_.c_str());
  }
}

std::vector<std::string> RunFolder::env(const std::string& resolve) const {
  return {"PARALLEX_HOME=" + (root_ / "home").string(),
          "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
          "HOME=" + (root_ / "userhome").string(),
          "PARALLEX_TEST_RESOLVE=" + resolve,
          "PARALLEX_TEST_UPSTREAM_CA=" + (TestPki::get().dir / "ca.crt").string(),
          "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
}

Outcome RunFolder::parallex(const std::vector<std::string>& args, const std::string& resolve,
                            const std::vector<std::string>& extra, std::chrono::seconds timeout,
                            const std::string& input) const {
  std::vector<std::string> argv{PARALLEX_TEST_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  auto env = this->env(resolve);
  env.insert(env.end(), extra.begin(), extra.end());
  return spawn_and_wait(argv, env, root_ / "logs", timeout, input);
}

fs::path RunFolder::latest_run() const {
  fs::path newest;
  fs::file_time_type when{};
  for (const auto& e : fs::recursive_directory_iterator(root_ / "home")) {
    if (e.path().filename() != "run.json") continue;
    if (newest.empty() || e.last_write_time() > when) {
      newest = e.path().parent_path();
      when = e.last_write_time();
    }
  }
  return newest;
}

}  // namespace px::broker::test
