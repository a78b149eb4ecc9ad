#include "pluginhost/plugin_check.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "common/unique_fd.hpp"
#include "pluginhost/loaded_plugin.hpp"

namespace px::plugins {

namespace {

// Runs in the child: load, then call each callback once with harmless input.
// Writes the stage reached to `fd` before each step, so a crash names it.
[[noreturn]] void exercise(const std::filesystem::path& file, int fd) {
  auto say = [fd](const std::string& s) {
    std::string line = s + "\n";
    (void)!::write(fd, line.data(), line.size());
  };
  say("stage loading the library and calling its entry point");
  auto loaded = LoadedPlugin::load(file);
  if (!loaded) {
    say("error " + loaded.error().message);
    _exit(2);
  }
  const auto& plugin = *loaded.value();
  say("stage calling detect");
  CommandLine cmd{{"parallex-plugin-check", "--version"}, "", ""};
  if (auto d = plugin.detect(cmd); !d) {
    say("error " + d.error().message);
    _exit(2);
  }
  say("stage calling contribute");
  if (auto c = plugin.contribute(policy::Platform::linux_host, "/nonexistent/home", "/nonexistent/home",
                                 "/nonexistent/run", &cmd);
      !c) {
    say("error " + c.error().message);
    _exit(2);
  }
  say("ok " + plugin.name() + " " + plugin.version());
  _exit(0);
}

}  // namespace

CheckOutcome check_in_child(const std::filesystem::path& file) {
  CheckOutcome out{file, false, ""};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.detail = std::string("cannot create a pipe: ") + std::strerror(errno);
    return out;
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.detail = std::string("cannot fork: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    read_end.reset();
    // A crash must end the child by its signal so the parent can name it;
    // a handler inherited from the host (a sanitizer's, say) would turn it
    // into an ordinary exit.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
    exercise(file, write_end.get());
  }
  write_end.reset();
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The last line the child wrote says how far it got.
  std::string last;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) last = text.substr(start, end - start);
    start = end + 1;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    out.detail = "crashed with SIG" + std::string(name ? name : std::to_string(sig).c_str()) + " while " +
                 (last.rfind("stage ", 0) == 0 ? last.substr(6) : std::string("starting"));
    return out;
  }
  if (last.rfind("ok ", 0) == 0) {
    out.ok = true;
    out.detail = "ok";
  } else if (last.rfind("error ", 0) == 0) {
    out.detail = last.substr(6);
  } else {
    out.detail = "exited with status " + std::to_string(WEXITSTATUS(status)) + " while " +
                 (last.rfind("stage ", 0) == 0 ? last.substr(6) : std::string("starting"));
  }
  return out;
}

}  // namespace px::plugins
