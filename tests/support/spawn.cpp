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
#include <thread>

namespace fs = std::filesystem;

namespace px::test {

namespace {

// In the child: its own process group (so a timeout kills what it started),
// the environment additions, then argv.
[[noreturn]] void exec_in_group(const std::vector<std::string>& argv, const std::vector<std::string>& extra) {
  ::setpgid(0, 0);
  for (const auto& kv : extra) ::putenv(const_cast<char*>(kv.c_str()));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  ::_exit(127);
}

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
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int i = ::open(in.c_str(), O_RDONLY);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(i, 0);
    exec_in_group(argv, extra);
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
  pid_ = ::fork();
  if (pid_ == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    exec_in_group(argv, extra);
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
