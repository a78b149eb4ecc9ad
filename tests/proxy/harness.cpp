#include "harness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/base64.hpp"
#include "scratch.hpp"

extern char** environ;

namespace px::proxy::test {

namespace {

int listen_loopback(std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || ::listen(fd, 512) != 0) {
    ::close(fd);
    return -1;
  }
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  port = ntohs(sin.sin_port);
  return fd;
}

bool wait_readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0;
}

}  // namespace

Upstream::Upstream(Mode mode) : mode_(mode) {
  listen_fd_ = listen_loopback(port_);
  acceptor_ = std::thread([this] {
    while (!stop_) {
      if (!wait_readable(listen_fd_, std::chrono::milliseconds(50))) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      std::lock_guard lock(mutex_);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  });
}

Upstream::~Upstream() {
  stop_ = true;
  acceptor_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
  ::close(listen_fd_);
}

std::vector<std::string> Upstream::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

void Upstream::serve(int fd) {
  std::vector<char> buf(64 * 1024);
  if (mode_ == Mode::echo) {
    while (!stop_) {
      if (!wait_readable(fd, std::chrono::milliseconds(50))) continue;
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n <= 0) break;
      if (!send_all(fd, std::string(buf.data(), static_cast<std::size_t>(n)))) break;
    }
    ::close(fd);
    return;
  }
  std::string req;
  std::size_t head_end = std::string::npos;
  std::size_t need = 0;
  bool chunked = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!stop_ && std::chrono::steady_clock::now() < deadline) {
    if (!wait_readable(fd, std::chrono::milliseconds(50))) continue;
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    req.append(buf.data(), static_cast<std::size_t>(n));
    if (head_end == std::string::npos) {
      head_end = req.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      head_end += 4;
      std::string lower = req.substr(0, head_end);
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (auto p = lower.find("\r\ncontent-length:"); p != std::string::npos)
        need = std::stoul(lower.substr(p + 17));
      chunked = lower.find("\r\ntransfer-encoding: chunked") != std::string::npos;
    }
    if (chunked ? req.find("0\r\n\r\n", head_end) != std::string::npos : req.size() >= head_end + need) break;
  }
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(req);
  }
  const std::string body = "hello from upstream";
  send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                   "\r\nConnection: close\r\n\r\n" + body);
  ::shutdown(fd, SHUT_WR);
  while (wait_readable(fd, std::chrono::milliseconds(200)) && ::read(fd, buf.data(), buf.size()) > 0) {
  }
  ::close(fd);
}

RecordingResolver::RecordingResolver(std::vector<std::string> names, std::string address)
    : state_(std::make_shared<State>()) {
  state_->names = std::move(names);
  state_->address = std::move(address);
}

Resolver RecordingResolver::resolver() {
  return [s = state_](const std::string& host) -> Result<std::vector<boost::asio::ip::address>> {
    std::lock_guard lock(s->mutex);
    s->asked.push_back(host);
    if (std::find(s->names.begin(), s->names.end(), host) == s->names.end()) {
      return Error::not_found("no such test host " + host);
    }
    return std::vector<boost::asio::ip::address>{boost::asio::ip::make_address(s->address)};
  };
}

std::vector<std::string> RecordingResolver::asked() const {
  std::lock_guard lock(state_->mutex);
  return state_->asked;
}

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::string read_until(int fd, const std::string& needle, std::chrono::milliseconds timeout) {
  std::string out;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (needle.empty() || out.find(needle) == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !wait_readable(fd, left)) break;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string roundtrip(std::uint16_t port, const std::string& bytes, std::chrono::milliseconds timeout,
                      const std::string& needle) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  send_all(fd, bytes);
  std::string out = read_until(fd, needle, timeout);
  ::close(fd);
  return out;
}

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return -1;
  return std::stoi(response.substr(9, 3));
}

std::string header_of(const std::string& response, const std::string& name) {
  std::string lower = response.substr(0, response.find("\r\n\r\n"));
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(), ::tolower);
  const auto p = lower.find("\r\n" + key + ":");
  if (p == std::string::npos) return {};
  const auto start = p + 2 + key.size() + 1;
  std::string v = response.substr(start, lower.find("\r\n", start) - start);
  while (!v.empty() && v.front() == ' ') v.erase(0, 1);
  return v;
}

std::string basic_auth(const std::string& user, const std::string& password) {
  return "Basic " + base64_encode(user + ":" + password);
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path temp_dir(const std::string& name) {
  std::string templ = (std::filesystem::temp_directory_path() / ("px-proxy-" + name + "-XXXXXX")).string();
  return ::mkdtemp(templ.data());
}

CommandResult run_command(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) env_store.emplace_back(*e);
  for (const auto& e : extra_env) env_store.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_store) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipefd[1]);
  CommandResult r;
  if (rc != 0) {
    ::close(pipefd[0]);
    return r;
  }
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) r.output.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

bool have_tool(const std::string& name) {
  return run_command({"sh", "-c", "command -v " + name + " >/dev/null"}).status == 0;
}

void ProxyTest::start(const std::function<void(ProxyConfig&)>& tweak) {
  if (dir_.empty()) dir_ = temp_dir("t");
  ProxyConfig c;
  c.mode = NetworkMode::allowlist;
  c.allowed_hosts = {"allowed.test"};
  c.allowed_ports = {http_.port(), echo_.port()};
  c.local_servers = true;
  c.password = kPassword;
  c.log_path = dir_ / "proxy.jsonl";
  c.limits.header_timeout = std::chrono::seconds(5);
  if (tweak) tweak(c);
  auto server = ProxyServer::listen(c, "127.0.0.1", 0, resolver_.resolver());
  ASSERT_TRUE(server) << server.error().message;
  proxy_ = std::move(server).value();
  port_ = proxy_->port();
  ASSERT_NE(port_, 0);
}

void ProxyTest::TearDown() {
  proxy_.reset();
  px::test::remove_unless_failed(dir_, HasFailure());
}

std::vector<nlohmann::json> ProxyTest::log_lines() const {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(dir_ / "proxy.jsonl"));
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace px::proxy::test
