#include "supervisor/run_opener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/ascii.hpp"
#include "common/clock.hpp"
#include "common/paths.hpp"
#include "common/port.hpp"
#include "common/redact.hpp"
#include "common/shown.hpp"
#include "killswitch/proc.hpp"
#include "run/opener_protocol.hpp"

namespace px::supervisor {
namespace {

// The rate limit: a burst of this many, then one every kOpenerRefill.
constexpr double kOpenerBurst = 5;
constexpr std::chrono::milliseconds kOpenerRefill{2000};
// The record keeps this many; past that they are counted.
constexpr std::size_t kOpenerKept = 100;
// A client that connects and says nothing holds the socket's thread this long at most.
constexpr int kOpenerReceiveMs = 300;

// An http(s) URL's host and port ("https://u:p@Example.org:8443/x" ->
// example.org, 8443); false for another kind of address.
bool opener_web_host(const std::string& url, std::string& host, std::uint16_t& port) {
  const std::string lower = ascii_lower(url.substr(0, 8));
  std::size_t start = 0;
  if (lower.rfind("https://", 0) == 0) {
    start = 8;
    port = 443;
  } else if (lower.rfind("http://", 0) == 0) {
    start = 7;
    port = 80;
  } else {
    return false;
  }
  std::string authority = url.substr(start, url.find_first_of("/?#", start) - start);
  if (const auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  std::string name = authority;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return false;
    name = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      const auto p = parse_port(authority.substr(close + 2));
      if (!p) return false;
      port = *p;
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
    name = authority.substr(0, colon);
    if (colon + 1 < authority.size()) {
      const auto p = parse_port(authority.substr(colon + 1));
      if (!p) return false;
      port = *p;
    }
  }
  if (name.empty()) return false;
  host = ascii_lower(name);
  return true;
}

// A program holds the terminal in raw mode: a TUI owns the screen, and a line
// written now would be drawn over it (or over the line it is drawing).
bool opener_terminal_is_raw() {
  termios t{};
  if (!::isatty(STDERR_FILENO) || ::tcgetattr(STDERR_FILENO, &t) != 0) return false;
  return (t.c_lflag & ICANON) == 0;
}

}  // namespace

RunOpener::RunOpener(InRule in_rule, bool sealed, Say say, const run::EventLog* events)
    : in_rule_(std::move(in_rule)), sealed_(sealed), say_(std::move(say)), events_(events) {}

RunOpener::~RunOpener() {
  watch_.stop();
}

void RunOpener::start(const fs::path& private_dir) {
  if (!sealed_ || private_dir.empty()) return;
  const fs::path dir = run::opener_dir(private_dir);
  const fs::path socket_path = dir / run::kOpenerSocket;
  auto unavailable = [&](const std::string& why) {
    say_({run::NoticeKind::seal, "a page the run asks to open cannot be shown to you in this run (" + why +
                                     "); its programs find no browser"});
  };
  std::error_code ec;
  fs::create_directory(dir, ec);
  if (ec) return unavailable("making " + dir.string() + ": " + ec.message());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.native().size() >= sizeof addr.sun_path)
    return unavailable("the socket's path " + socket_path.string() + " is longer than 107 bytes");
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.native().size());
  UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s || ::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(socket_path.c_str(), 0600) != 0 || ::listen(s.get(), 8) != 0)
    return unavailable(std::string("its socket: ") + std::strerror(errno));
  const fs::path self = parallex_executable();
  for (const auto name : run::kOpenerNames) {
    fs::create_symlink(self, dir / std::string(name), ec);
    if (ec) return unavailable("linking " + std::string(name) + ": " + ec.message());
  }
  tokens_ = kOpenerBurst;
  refilled_ = std::chrono::steady_clock::now();
  listener_ = std::move(s);
  dir_ = dir;
}

void RunOpener::on_started() {
  // After the seal's fork (no thread of the supervisor runs at it): what a
  // program asked before now waits in the socket's backlog.
  if (!listener_) return;
  if (!watch_.start(listener_.get(), [this] { serve(); }))
    say_({run::NoticeKind::seal,
          "a page the run asks to open cannot be shown to you in this run (its thread "
          "could not start); its programs get no answer from their browser"});
}

void RunOpener::add_to(backend::EnvMap& env) const {
  if (dir_.empty()) return;
  env["BROWSER"] = (dir_ / "xdg-open").string();
  env[run::kOpenerSocketVariable] = (dir_ / run::kOpenerSocket).string();
  const auto path = env.find("PATH");
  env["PATH"] = dir_.string() + (path == env.end() || path->second.empty() ? "" : ":" + path->second);
}

bool RunOpener::allowed_now() {
  const auto now = std::chrono::steady_clock::now();
  tokens_ = std::min(kOpenerBurst, tokens_ + std::chrono::duration<double>(now - refilled_) /
                                                 std::chrono::duration<double>(kOpenerRefill));
  refilled_ = now;
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

void RunOpener::serve() {
  for (;;) {
    UniqueFd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c) return;  // nothing more waiting (EAGAIN), or a failure: the next one is tried when it comes
    timeval tv{0, kOpenerReceiveMs * 1000};
    ::setsockopt(c.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string buf(run::kOpenerMaxMessage + 1, '\0');
    const ssize_t n = ::recv(c.get(), buf.data(), buf.size(), MSG_TRUNC);
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) cred.pid = 0;
    std::string answer;
    if (n <= 0) {
      answer = "no address came";
    } else if (static_cast<std::size_t>(n) > run::kOpenerMaxMessage) {
      answer = "the address is longer than " + std::to_string(run::kOpenerMaxUrl) + " bytes";
    } else {
      buf.resize(static_cast<std::size_t>(n));
      const auto nul = buf.find('\0');
      const std::string by = nul == std::string::npos ? std::string() : buf.substr(0, nul);
      const std::string url = nul == std::string::npos ? buf : buf.substr(nul + 1);
      answer = take(by.substr(0, 32), url, cred.pid);
    }
    if (!answer.empty()) {
      std::lock_guard lock(mu_);
      ++taken_.refused;
    }
    const std::string reply = answer.empty() ? std::string("ok") : answer;
    (void)::send(c.get(), reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

// "" when taken; else why not (the opener prints it to the program).
std::string RunOpener::take(const std::string& by, const std::string& url, pid_t pid) {
  if (url.empty()) return "no address came";
  if (url.size() > run::kOpenerMaxUrl)
    return "the address is longer than " + std::to_string(run::kOpenerMaxUrl) + " bytes";
  run::OpenRequest r;
  {
    std::lock_guard lock(mu_);
    if (!allowed_now()) return "too many pages asked for at once; this one was not shown";
    if (taken_.requests.size() >= kOpenerKept) return "this run asked for too many pages; no more are shown";
  }
  // A secret the broker holds never shows, even in an address (a device
  // code the user must type is no such secret: it shows).
  r.url = redact(url);
  r.by = shown(by);
  r.at = iso_utc_now();
  if (opener_web_host(url, r.host, r.port)) r.in_rule = in_rule_(r.host, r.port);
  // The opener's parent is the program that asked.
  if (pid > 0)
    if (const auto stat = killswitch::read_proc_stat(pid); stat && stat->ppid > 0)
      r.process = redact(killswitch::describe_process(stat->ppid));
  if (events_) events_->emit(run::event::open_requested, run::open_request_fields(r));
  std::string text =
      "the run asked to open " + shown(r.url) + " — not opened: open it yourself if you want it";
  if (r.in_rule && !*r.in_rule) text += " (" + shown(r.host) + " is outside the run's network rule)";
  if (!r.process.empty()) text += "; asked by " + shown(r.process);
  const run::Notice notice{run::NoticeKind::open_request, text};
  const bool hold = opener_terminal_is_raw();
  {
    std::lock_guard lock(mu_);
    taken_.requests.push_back(std::move(r));
    if (hold) held_.push_back(notice);
  }
  if (!hold) say_(notice);
  return {};
}

void RunOpener::stop(run::RunRecord& record) {
  release();
  std::lock_guard lock(mu_);
  if (!taken_.requests.empty() || taken_.refused > 0) record.open_requests = taken_;
  for (auto& n : held_) record.notices.push_back(std::move(n));
  held_.clear();
}

void RunOpener::release() {
  watch_.stop();
  listener_.reset();
}

}  // namespace px::supervisor
