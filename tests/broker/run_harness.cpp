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

namespace px::broker::test {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<nlohmann::json> json_lines(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(p));
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(nlohmann::json::parse(l, nullptr, false));
  return out;
}

bool have(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

Outcome spawn_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& extra,
                       const fs::path& dir, std::chrono::seconds timeout, const std::string& input) {
  static int counter = 0;
  const int n = counter++;
  const fs::path out = dir / ("out." + std::to_string(n)), err = dir / ("err." + std::to_string(n)),
                 in = dir / ("in." + std::to_string(n));
  std::ofstream(in) << input;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int i = ::open(in.c_str(), O_RDONLY);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(i, 0);
    for (const auto& kv : extra) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  Outcome r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.err = "(killed after the timeout)\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err += slurp(err);
  return r;
}

Background::Background(const std::vector<std::string>& argv, const std::vector<std::string>& extra) {
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    for (const auto& kv : extra) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
}

Background::~Background() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
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
}

RunFolder::~RunFolder() {
  std::error_code ec;
  if (!keep_ && !::testing::Test::HasFailure())
    fs::remove_all(root_, ec);
  else
    std::printf("[ kept ] %s\n", root_.c_str());
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
