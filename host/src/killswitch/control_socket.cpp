#include "killswitch/control_socket.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/json_io.hpp"
#include "killswitch/proc.hpp"

namespace px::killswitch {
namespace {

constexpr std::size_t kMaxLine = 64 * 1024;

Result<sockaddr_un> unix_address(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string s = path.string();
  if (s.size() >= sizeof addr.sun_path)
    return Error::invalid("the socket path " + s +
                          " is too long for a unix socket; set XDG_RUNTIME_DIR to a shorter dir.");
  std::memcpy(addr.sun_path, s.c_str(), s.size() + 1);
  return addr;
}

void set_timeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads up to the first newline; nullopt on timeout (errno EAGAIN), error or
// an over-long line.
std::optional<std::string> read_line(int fd) {
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return line.empty() ? std::nullopt : std::optional<std::string>(line);
    line.append(buf, static_cast<std::size_t>(n));
    if (const auto nl = line.find('\n'); nl != std::string::npos) return line.substr(0, nl);
    if (line.size() > kMaxLine) return std::nullopt;
  }
}

nlohmann::json failure(const std::string& message, bool refused = false) {
  nlohmann::json j{{"v", kControlProtocolVersion}, {"ok", false}, {"error", message}};
  if (refused) j["refused"] = true;
  return j;
}

}  // namespace

bool is_run_cgroup_path(const std::string& cgroup_path) {
  const fs::path p(cgroup_path);
  bool after_parallex = false;
  for (const auto& part : p) {
    const std::string s = part.string();
    if (after_parallex && !s.empty()) return true;
    after_parallex = s == "parallex";
    if (s.rfind("parallex-", 0) == 0) return true;
  }
  return false;
}

std::optional<std::string> refuse_reason_for_peer(
    pid_t pid, uid_t uid, const std::function<std::optional<std::string>(pid_t)>& extra) {
  if (uid != ::geteuid() && uid != 0)
    return "the request comes from another user (uid " + std::to_string(uid) + ")";
  if (pid <= 0)
    return std::string("the request comes from a process outside this pid namespace (a sealed run)");
  const auto ours = proc_ns_inode(::getpid(), "pid");
  const auto theirs = proc_ns_inode(pid, "pid");
  if (theirs == 0)
    return std::string("the requesting process cannot be inspected, so it may be inside a run");
  if (ours != theirs)
    return std::string("the request comes from another pid namespace (inside a sealed run)");
  if (is_run_cgroup_path(proc_cgroup_v2(pid)))
    return std::string("the request comes from a process in a run's cgroup (inside a run)");
  if (proc_environ_has(pid, "PARALLEX_RUN=1"))
    return std::string("the request comes from a process with PARALLEX_RUN=1 (inside a run)");
  if (extra) return extra(pid);
  return std::nullopt;
}

std::optional<std::string> client_inside_run_reason() {
  if (const char* v = std::getenv("PARALLEX_RUN"); v && std::strcmp(v, "1") == 0)
    return std::string(
        "this command runs inside a Parallex run (PARALLEX_RUN=1); only a command from outside every run "
        "can pause, resume or kill runs");
  if (is_run_cgroup_path(proc_cgroup_v2(::getpid())))
    return std::string(
        "this command runs inside a Parallex run (its cgroup is a run's); only a command from outside "
        "every run can pause, resume or kill runs");
  return std::nullopt;
}

std::int64_t boottime_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

Result<std::unique_ptr<ControlServer>> ControlServer::start(fs::path path, Handler handler,
                                                            PeerCheck extra_check, Idle idle) {
  std::unique_ptr<ControlServer> s(new ControlServer());
  s->path_ = std::move(path);
  s->handler_ = std::move(handler);
  s->extra_check_ = std::move(extra_check);
  s->idle_ = std::move(idle);
  PX_TRY_ASSIGN(const sockaddr_un addr, unix_address(s->path_));
  s->listen_fd_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s->listen_fd_) return Error::io("create a unix socket", errno);
  // A socket file left by a dead supervisor of the same run id.
  if (probe_socket(s->path_) == ECONNREFUSED) ::unlink(s->path_.c_str());
  // No umask games (process-wide, other threads create files): the dir is
  // 0700, so the socket is private from the start; chmod makes it 0600 too.
  const int rc = ::bind(s->listen_fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  if (rc != 0) {
    if (err == EADDRINUSE)
      return Error::conflict("another supervisor listens on " + s->path_.string() + " already.");
    return Error::io("bind " + s->path_.string(), err);
  }
  ::chmod(s->path_.c_str(), 0600);
  if (::listen(s->listen_fd_.get(), 64) != 0) return Error::io("listen on " + s->path_.string(), errno);
  WatchThread::Options options;
  if (s->idle_) {
    options.idle_every = kIdleEvery;
    options.on_idle = s->idle_;
  }
  PX_TRY(s->watch_.start(
      s->listen_fd_.get(), [raw = s.get()] { raw->serve_one(); }, std::move(options)));
  return s;
}

ControlServer::~ControlServer() {
  stop();
}

void ControlServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  watch_.stop();
  if (!path_.empty()) ::unlink(path_.c_str());
  listen_fd_.reset();
}

void ControlServer::serve_one() {
  // Also before a request: a supervisor that was stopped, then continued,
  // first takes in what was done to its run meanwhile, then what is asked.
  if (idle_) idle_();
  UniqueFd conn(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (conn) handle(conn.get());
}

void ControlServer::handle(int conn) {
  // One slow client holds the thread for at most this long.
  set_timeouts(conn, std::chrono::seconds(2));
  ucred cred{};
  socklen_t len = sizeof cred;
  nlohmann::json response;
  // The line is read first so that a refused client still gets its answer
  // rather than a reset connection.
  const auto line = read_line(conn);
  if (!line) return;
  if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    response = failure("the supervisor could not identify the requesting process", true);
  } else if (auto why = refuse_reason_for_peer(cred.pid, cred.uid, extra_check_)) {
    response =
        failure("refused: " + *why + "; pause, resume and kill only come from outside every run", true);
  } else {
    const auto request = parse_json_input(*line);
    if (request.is_discarded() || !request.is_object() || !request.contains("op") ||
        !request["op"].is_string()) {
      response = failure("the request is not a JSON object with an \"op\"");
    } else if (request.value("v", 0) != kControlProtocolVersion) {
      response =
          failure("this supervisor speaks control protocol version 1; update parallex so both sides match");
    } else if (const auto deadline = request.find("deadline_ms");
               deadline != request.end() && deadline->is_number_integer() &&
               deadline->get<std::int64_t>() < boottime_ms()) {
      // The client gave up waiting and acted on the run itself (this
      // supervisor was stopped or hung): what it did comes through
      // take_direct(), in order; this late request is not acted on.
      return;
    } else {
      try {
        response = handler_(request, cred.pid);
      } catch (const std::exception& e) {
        response = failure(std::string("the supervisor failed: ") + e.what());
      }
      response["v"] = kControlProtocolVersion;
    }
  }
  write_all(conn, to_json_text(response) + "\n");
}

int probe_socket(const fs::path& socket) {
  auto addr = unix_address(socket);
  if (!addr) return ENAMETOOLONG;
  // Non-blocking: a supervisor that stopped accepting (SIGSTOP, hung) with
  // its backlog full would hold a blocking connect for ever.
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return errno;
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.value()), sizeof(sockaddr_un)) != 0)
    return errno;
  return 0;
}

Result<nlohmann::json> send_request(const fs::path& socket, const nlohmann::json& request,
                                    std::chrono::milliseconds timeout) {
  PX_TRY_ASSIGN(const sockaddr_un addr, unix_address(socket));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error::io("create a unix socket", errno);
  const auto no_answer = [&] {
    return Error::conflict("the supervisor on " + socket.string() + " did not answer within " +
                           std::to_string(timeout.count()) + " ms");
  };
  // Before the connect too: a unix connect waits for room in a full backlog
  // for as long as the send time-out says.
  set_timeouts(fd.get(), timeout);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ECONNREFUSED)
      return Error::not_found("no supervisor listens on " + socket.string() + " (the run has ended)");
    if (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT || err == EINPROGRESS) return no_answer();
    return Error::io("connect to " + socket.string(), err);
  }
  nlohmann::json sent = request;
  sent["deadline_ms"] = boottime_ms() + timeout.count();
  if (!write_all(fd.get(), to_json_text(sent) + "\n")) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return no_answer();
    return Error::io("send to " + socket.string(), errno);
  }
  errno = 0;
  const auto line = read_line(fd.get());
  if (!line) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return no_answer();
    if (errno == 0)
      return Error::io("the supervisor on " + socket.string() + " closed the connection without an answer",
                       EPROTO);
    return Error::io("read the answer from " + socket.string(), errno);
  }
  auto j = parse_json_input(*line);
  if (j.is_discarded() || !j.is_object())
    return Error::internal("the supervisor on " + socket.string() + " answered something that is not JSON");
  return j;
}

}  // namespace px::killswitch
