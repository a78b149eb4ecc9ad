#include "spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

namespace fs = std::filesystem;

namespace px::test {

namespace {

// What a child execs, made before the fork: a test process may run threads
// (servers, tracers), and a child of a threaded process must not allocate
// (a lock another thread held as it forked stays held in the child).
class Exec {
 public:
  Exec(const std::vector<std::string>& argv, const std::vector<std::string>& extra) : extra_(extra) {
    for (const auto& a : argv) args_.push_back(const_cast<char*>(a.c_str()));
    args_.push_back(nullptr);
    // The environment with the additions in place of what they name (as
    // putenv: "NAME=value" sets, a bare "NAME" removes).
    const auto name_of = [](std::string_view kv) { return kv.substr(0, kv.find('=')); };
    for (char** e = environ; *e; ++e) {
      bool replaced = false;
      for (const auto& x : extra_) replaced |= name_of(x) == name_of(*e);
      if (!replaced) env_.push_back(*e);
    }
    for (auto& x : extra_)
      if (x.find('=') != std::string::npos) env_.push_back(x.data());
    env_.push_back(nullptr);
  }
  // In the child: its own process group (so a timeout kills what it started),
  // then argv, looked up in the PATH it is given (execvp reads `environ`).
  [[noreturn]] void in_group() {
    ::setpgid(0, 0);
    environ = env_.data();
    ::execvp(args_[0], args_.data());
    ::_exit(127);
  }

 private:
  std::vector<std::string> extra_;
  std::vector<char*> args_;
  std::vector<char*> env_;
};

}  // namespace

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool have(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

Outcome spawn_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& extra,
                       const fs::path& dir, std::chrono::seconds timeout, const std::string& input) {
  static std::atomic<int> counter{0};
  const std::string n = std::to_string(::getpid()) + "." + std::to_string(counter++);
  const fs::path out = dir / ("out." + n), err = dir / ("err." + n), in = dir / ("in." + n);
  std::ofstream(in) << input;
  Exec exec(argv, extra);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int i = ::open(in.c_str(), O_RDONLY);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(i, 0);
    exec.in_group();
  }
  Outcome r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.err = "(killed after the timeout)\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err += slurp(err);
  return r;
}

Background::Background(const std::vector<std::string>& argv, const std::vector<std::string>& extra) {
  Exec exec(argv, extra);
  pid_ = ::fork();
  if (pid_ == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    exec.in_group();
  }
}

Background::~Background() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace px::test
