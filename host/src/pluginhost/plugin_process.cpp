#include "pluginhost/plugin_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/shown.hpp"
#include "pluginhost/plugin_library.hpp"

namespace px::pluginhost {

namespace {

using wire::Json;

constexpr int kSocketFd = 3;
// A plugin's log: lines longer than this are cut, and a call logs this many at most.
constexpr std::size_t kMaxLogLine = 2000;
constexpr int kMaxLogLines = 200;

// ---- the plugins' process --------------------------------------------------------

std::mutex g_write;  // the child's: a plugin may log from a thread of its own

void send_frame(const Json& j) {
  const std::string bytes = wire::encode(j);
  std::lock_guard lock(g_write);
  if (!wire::write_frame(kSocketFd, bytes)) _exit(0);  // the host is gone
}

void send_part(std::string_view text) {
  std::lock_guard lock(g_write);
  if (!wire::write_part(kSocketFd, text)) _exit(0);  // the host is gone
}

policy::Platform platform_of(const Json& r) {
  return r.at("platform").get<int>() == static_cast<int>(policy::Platform::macos)
             ? policy::Platform::macos
             : policy::Platform::linux_host;
}

Json error_answer(const Error& e) {
  return {{"error", e.message}, {"kind", static_cast<int>(e.kind)}};
}

template <class T>
Json answer(Result<T>&& r) {
  if (!r) return error_answer(r.error());
  return {{"ok", wire::to_json(std::move(r).value())}};
}

Json handle(std::map<std::size_t, std::unique_ptr<PluginLibrary>>& loaded, const Json& r) {
  const std::string op = r.at("op").get<std::string>();
  const std::size_t index = r.at("i").get<std::size_t>();
  if (op == "load") {
    auto log = [](int level, const std::string& text) {
      send_frame({{"log", level}, {"text", text.substr(0, kMaxLogLine)}});
    };
    auto lib = PluginLibrary::load(r.at("file").get<std::string>(), log);
    if (!lib) return error_answer(lib.error());
    const PluginInfo info = lib.value()->info();
    loaded[index] = std::move(lib).value();
    return answer(Result<PluginInfo>(info));
  }
  const auto found = loaded.find(index);
  if (found == loaded.end()) return {{"error", "the plugin is not loaded"}, {"kind", 0}};
  const PluginLibrary& p = *found->second;
  const auto text = [&](const char* key) { return r.at(key).get<std::string>(); };
  if (op == "detect") {
    auto cmd = wire::command_line(r.at("command"));
    if (!cmd) return error_answer(cmd.error());
    return answer(p.detect(cmd.value()));
  }
  if (op == "contribute") {
    std::optional<CommandLine> cmd;
    if (!r.at("command").is_null()) {
      auto c = wire::command_line(r.at("command"));
      if (!c) return error_answer(c.error());
      cmd = std::move(c).value();
    }
    return answer(p.contribute(platform_of(r), text("user_home"), text("run_home"), text("run_folder"),
                               cmd ? &*cmd : nullptr));
  }
  if (op == "sign_in") return answer(p.sign_in_steps(platform_of(r), text("user_home"), text("agent_home")));
  if (op == "parse")  // each session a part as the plugin gives it: megabytes, neither kept nor copied
    return answer(p.parse_transcripts(r.at("paths").get<std::vector<std::string>>(),
                                      r.at("since").get<std::int64_t>(), r.at("until").get<std::int64_t>(),
                                      send_part));
  if (op == "roots") return answer(p.transcript_roots(text("run_home"), text("run_folder")));
  if (op == "project_files") return answer(p.project_files());
  if (op == "home_files") return answer(p.home_files(platform_of(r)));
  return {{"error", "unknown request " + op}, {"kind", 0}};
}

// The child, from the fork on. Never returns.
[[noreturn]] void serve(int socket, pid_t host) {
  // Ends with the host, whatever the host dies of.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != host) _exit(0);
  // A crash ends the child by its signal, so the host can name it: no handler
  // of the host's (a sanitizer's, a stop handler) turns it into an exit.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  // The terminal's ^C is the host's to act on.
  ::setpgid(0, 0);
  if (::dup2(socket, kSocketFd) != kSocketFd) _exit(3);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  ::close_range(kSocketFd + 1, ~0U, 0);
  std::map<std::size_t, std::unique_ptr<PluginLibrary>> loaded;
  for (;;) {
    std::string bytes;
    if (wire::read_frame(kSocketFd, bytes) != wire::Read::frame) _exit(0);
    Json reply;
    try {
      auto request = wire::decode(bytes);
      reply = request
                  ? handle(loaded, request.value())
                  : Json{{"error", request.error().message}, {"kind", static_cast<int>(ErrorKind::internal)}};
    } catch (const std::exception& e) {
      reply = {{"error", std::string("the request could not be served: ") + e.what()},
               {"kind", static_cast<int>(ErrorKind::internal)}};
    }
    send_frame(reply);
  }
}

// ---- the host's side ----------------------------------------------------------------

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (abbrev ? std::string(", SIG") + abbrev : std::string());
}

std::string seconds_text(std::chrono::milliseconds limit) {
  const long long ms = limit.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s"
                        : std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

void log_line(const std::string& who, const Json& frame) {
  const int level = frame.value("log", 0);
  const std::string text =
      frame.contains("text") && frame["text"].is_string() ? frame["text"].get<std::string>() : "";
  const std::string line = who + ": " + shown(text);
  if (level >= PX_LOG_WARN)
    spdlog::warn("{}", line);
  else if (level == PX_LOG_INFO)
    spdlog::info("{}", line);
  else
    spdlog::debug("{}", line);
}

}  // namespace

std::chrono::milliseconds PluginProcess::time_limit(Stage stage) {
  if (const char* v = std::getenv("PARALLEX_PLUGIN_TIMEOUT"); v && *v) {
    char* end = nullptr;
    const double seconds = std::strtod(v, &end);
    if (end && *end == '\0' && seconds > 0 && seconds <= 86400)
      return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  }
  return std::chrono::seconds(stage == Stage::parse_transcripts ? 300 : 10);
}

PluginProcess::~PluginProcess() {
  std::lock_guard lock(mu_);
  stop();
}

void PluginProcess::stop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

std::string PluginProcess::who(std::size_t index) const {
  const auto it = plugins_.find(index);
  if (it == plugins_.end()) return "a plugin";
  return it->second.name.empty() ? "plugin file " + it->second.file.string() : "plugin " + it->second.name;
}

Status PluginProcess::start() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return Error::io("make the socket to the plugins' process", errno);
  const pid_t host = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Error::io("start the plugins' process", err);
  }
  if (pid == 0) {
    ::close(fds[0]);
    serve(fds[1], host);
  }
  ::close(fds[1]);
  pid_ = pid;
  fd_ = fds[0];
  // Every plugin loaded before that is not broken, again, in the same order.
  for (auto& [index, p] : plugins_) {
    if (p.name.empty() || p.broken) continue;
    auto loaded = exchange({{"op", "load"}, {"i", index}, {"file", p.file.string()}}, index, Stage::load);
    if (!loaded && !p.broken) p.broken = loaded.error().message;
    if (pid_ < 0) return start();  // it crashed this time: the next process leaves it out
  }
  return ok();
}

Result<wire::Json> PluginProcess::exchange(const Json& request, std::size_t index, Stage stage,
                                           const SessionSink& on_part) {
  const std::string name = who(index);
  // "in detect"; a load runs the library's constructors and its entry point.
  const std::string in = stage == Stage::load ? "while being loaded (its constructors and entry point)"
                                              : "in " + std::string(to_string(stage));
  const auto limit = time_limit(stage);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::string why;
  if (wire::write_frame(fd_, wire::encode(request))) {
    int log_lines = 0;
    std::vector<std::string> parts;  // of the answer on its way (wire::write_part)
    std::size_t part_bytes = 0;
    std::string bytes;  // one frame; its memory serves the next when nothing keeps it
    for (;;) {
      const wire::Read got = wire::read_frame(fd_, bytes, deadline);
      if (got == wire::Read::timeout) {
        why = name + " did not answer within " + seconds_text(limit) + " " + in +
              " and was stopped (PARALLEX_PLUGIN_TIMEOUT sets the limit in seconds)";
        ::kill(pid_, SIGKILL);
        break;
      }
      if (got == wire::Read::closed) break;
      if (wire::is_part(bytes) && on_part) {
        on_part(wire::part_view(bytes));
        continue;
      }
      if (wire::is_part(bytes)) {
        // What each part costs the host, its string's own size counted: a
        // billion empty parts are refused as a gigabyte is.
        part_bytes += bytes.size() + sizeof(std::string);
        if (part_bytes > wire::kMaxFrame) {
          why = name + " sent an answer of over " + std::to_string(wire::kMaxFrame >> 20) + " MB " + in;
          ::kill(pid_, SIGKILL);
          break;
        }
        parts.push_back(wire::part_text(std::move(bytes)));
        continue;
      }
      auto frame = wire::decode(bytes);
      if (!frame || !frame.value().is_object()) {
        why = name + " sent an answer that could not be read " + in;
        ::kill(pid_, SIGKILL);
        break;
      }
      const Json& f = frame.value();
      if (f.contains("log")) {
        if (++log_lines <= kMaxLogLines) log_line(name, f);
        continue;
      }
      if (f.contains("ok")) {
        Json ok = f["ok"];
        if (parts.empty()) return ok;
        if (!ok.is_object() || ok.contains("parts")) {
          why = name + " sent text parts with an answer that takes none " + in;
          ::kill(pid_, SIGKILL);
          break;
        }
        Json& into = ok["parts"] = Json::array();
        for (auto& p : parts) into.push_back(std::move(p));
        return ok;
      }
      // The plugin's own words (an exception's message) go to a terminal: escaped.
      const std::string message =
          f.contains("error") && f["error"].is_string() ? shown(f["error"].get<std::string>()) : "";
      const int kind = f.value("kind", static_cast<int>(ErrorKind::plugin));
      return Error{
          static_cast<ErrorKind>(kind >= 0 && kind <= static_cast<int>(ErrorKind::internal) ? kind : 3),
          message};
    }
  }
  // No answer: the process is gone (or stopped above). Say how it ended.
  ::close(fd_);
  fd_ = -1;
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (why.empty()) {
    if (waited > 0 && WIFSIGNALED(status))
      why = name + " crashed " + in + " (" + signal_text(WTERMSIG(status)) + ")";
    else if (waited > 0 && WIFEXITED(status))
      why = name + " ended the plugins' process " + in + " (exit status " +
            std::to_string(WEXITSTATUS(status)) + ")";
    else
      why = name + " left the plugins' process " + in;
  }
  if (auto it = plugins_.find(index); it != plugins_.end()) it->second.broken = why;
  return Error::plugin(why);
}

void PluginProcess::reap_if_gone() {
  if (pid_ < 0) return;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return;
  // Gone between calls, while it waited for a request: no plugin's code ran.
  // The thread that forked it ended (PR_SET_PDEATHSIG follows the thread),
  // or someone killed it. A new one is started; nobody is blamed.
  ::close(fd_);
  fd_ = -1;
  pid_ = -1;
}

Result<PluginInfo> PluginProcess::load(std::size_t index, const std::filesystem::path& file) {
  std::lock_guard lock(mu_);
  plugins_[index] = Plugin{file, "", std::nullopt};
  reap_if_gone();
  if (pid_ < 0) PX_TRY(start());
  auto answer = exchange({{"op", "load"}, {"i", index}, {"file", file.string()}}, index, Stage::load);
  if (!answer) {
    plugins_.erase(index);
    const std::string& m = answer.error().message;
    // A crash names the file; a load error names it already.
    if (m.rfind(file.string(), 0) == 0) return answer.error();
    return Error::plugin(m + "; remove it from the plugin path or rebuild it");
  }
  auto info = wire::plugin_info(answer.value());
  if (!info) {
    plugins_.erase(index);
    return Error::plugin(file.string() + ": " + info.error().message);
  }
  plugins_[index].name = info.value().name;
  return info;
}

std::optional<std::string> PluginProcess::broken(std::size_t index) const {
  std::lock_guard lock(mu_);
  const auto it = plugins_.find(index);
  return it == plugins_.end() ? std::nullopt : it->second.broken;
}

Result<wire::Json> PluginProcess::call(std::size_t index, Stage stage, const std::string& op, Json args,
                                       const SessionSink& on_part) {
  std::lock_guard lock(mu_);
  const auto it = plugins_.find(index);
  if (it == plugins_.end() || it->second.name.empty())
    return Error::internal("a call to a plugin not loaded");
  if (it->second.broken) return Error::plugin(*it->second.broken);
  args["op"] = op;
  args["i"] = index;
  const std::string key = wire::encode(args);
  if (const auto known = answers_.find(key); known != answers_.end()) return known->second;
  reap_if_gone();
  if (pid_ < 0) PX_TRY(start());
  if (it->second.broken) return Error::plugin(*it->second.broken);
  auto answer = exchange(args, index, stage, on_part);
  // A crash is not kept as an answer: the plugin is broken instead. Nor are
  // the sessions read from transcripts: the files change, and the answer is
  // megabytes the caller takes apart.
  if ((answer || !it->second.broken) && stage != Stage::parse_transcripts) answers_.emplace(key, answer);
  return answer;
}

}  // namespace px::pluginhost
