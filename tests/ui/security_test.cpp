// `parallex ui` served safely (docs/ui.md): the real server, asked over real
// sockets the way a browser or another page would. No key, no cookie: 401 on
// every endpoint that changes anything; another Origin or Host: 403; and a
// real sealed run, Local servers on or off, cannot reach its port.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/ui_ports.hpp"
#include "common/unique_fd.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using px::test::Outcome;
using px::test::slurp;
using px::test::spawn_and_wait;

// One request over a fresh connection; the whole answer (Connection: close).
std::string http(std::uint16_t port, const std::string& request) {
  px::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return "";
  timeval tv{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) return "";
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

int status_of(const std::string& answer) {
  return answer.size() > 12 && answer.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(answer.substr(9, 3)) : -1;
}

// A plain server on a loopback port of the host: what Local servers does reach.
class PlainServer {
 public:
  PlainServer() {
    fd_ = px::UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_.get(), 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = ::accept(fd_.get(), nullptr, nullptr);
        if (c < 0) break;
        char buf[2048];
        (void)::recv(c, buf, sizeof buf, 0);
        const std::string reply = "HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nplain server";
        (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~PlainServer() {
    stop_ = true;
    ::shutdown(fd_.get(), SHUT_RDWR);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  px::UniqueFd fd_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class UiSecurity : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/px-ui-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    root_ = templ;
    for (const char* d : {"home", "runtime", "work", "logs"}) {
      fs::create_directories(root_ / d);
      ::chmod((root_ / d).c_str(), 0700);
    }
    start_ui();
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::vector<std::string> env() const {
    return {"PARALLEX_HOME=" + (root_ / "home").string(), "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()};
  }

  // `parallex ui --no-open`, its address read from its first line.
  void start_ui() {
    const fs::path out = root_ / "logs" / "ui.out";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, (root_ / "logs" / "ui.err").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) envs.emplace_back(*e);
    for (const auto& e : env()) envs.push_back(e);
    std::vector<char*> envp;
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string exe = PARALLEX_EXE, ui = "ui", no_open = "--no-open";
    char* argv[] = {exe.data(), ui.data(), no_open.data(), nullptr};
    ASSERT_EQ(posix_spawn(&pid_, exe.c_str(), &fa, nullptr, argv, envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    const std::string prefix = "Parallex UI: http://127.0.0.1:";
    for (int i = 0; i < 200; ++i) {
      const std::string text = slurp(out);
      const auto at = text.find(prefix);
      const auto eol = text.find('\n', at);
      if (at != std::string::npos && eol != std::string::npos) {
        const std::string rest = text.substr(at + prefix.size(), eol - at - prefix.size());
        port_ = static_cast<std::uint16_t>(std::stoi(rest));
        key_ = rest.substr(rest.find("/?key=") + 6);
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    FAIL() << "parallex ui gave no address: " << slurp(out) << slurp(root_ / "logs" / "ui.err");
  }

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string origin() const { return "http://" + host(); }

  // A request with the right Host; `headers` each "Name: value\r\n".
  std::string ask(const std::string& method, const std::string& target, const std::string& headers,
                  const std::string& body = "") {
    return http(port_, method + " " + target + " HTTP/1.1\r\nHost: " + host() + "\r\nConnection: close\r\n" +
                           headers +
                           (body.empty() ? "" : "Content-Length: " + std::to_string(body.size()) + "\r\n") +
                           "\r\n" + body);
  }
  std::string cookie() const { return "Cookie: px_ui=" + key_ + "\r\n"; }

  Outcome sealed_run(const std::vector<std::string>& flags, const std::string& script) {
    std::vector<std::string> argv{PARALLEX_EXE, "run", "--in", (root_ / "work").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "sh", "-c", script});
    return spawn_and_wait(argv, env(), root_ / "logs");
  }

  fs::path root_;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string key_;
};

// Every endpoint that changes anything (docs/ui.md).
const std::vector<std::string> kChanging = {"/api/pause-all",
                                            "/api/resume-all",
                                            "/api/runs/20261206-114000-ab12/pause",
                                            "/api/runs/20261206-114000-ab12/resume",
                                            "/api/runs/20261206-114000-ab12/kill",
                                            "/api/runs/20261206-114000-ab12/allow",
                                            "/api/runs/20261206-114000-ab12/deny",
                                            "/api/questions/1",
                                            "/api/agents",
                                            "/api/agents/bob/grant",
                                            "/api/agents/bob/ungrant",
                                            "/api/agents/bob/allow",
                                            "/api/agents/bob/disallow",
                                            "/api/agents/bob/snapshot",
                                            "/api/agents/bob/rewind"};

TEST_F(UiSecurity, TheKeyIsExchangedForAStrictHttpOnlyCookie) {
  ASSERT_EQ(key_.size(), 64u);
  const auto ok = ask("GET", "/?key=" + key_, "");
  EXPECT_EQ(status_of(ok), 303) << ok;
  EXPECT_NE(ok.find("Set-Cookie: px_ui=" + key_ + "; HttpOnly; SameSite=Strict; Path=/"), std::string::npos)
      << ok;
  EXPECT_NE(ok.find("Location: /"), std::string::npos) << ok;
  const auto wrong = ask("GET", "/?key=" + std::string(64, '0'), "");
  EXPECT_EQ(status_of(wrong), 401) << wrong;
  EXPECT_EQ(wrong.find("Set-Cookie"), std::string::npos) << wrong;
  // Without the cookie the page is not served, only a note saying what to do.
  const auto page = ask("GET", "/", "");
  EXPECT_EQ(status_of(page), 401) << page;
  EXPECT_NE(page.find("Open the address"), std::string::npos) << page;
  const auto with = ask("GET", "/", cookie());
  EXPECT_EQ(status_of(with), 200) << with;
  EXPECT_NE(with.find("<html"), std::string::npos) << with;
  for (const auto* header :
       {"Content-Security-Policy: default-src 'none'; script-src 'self'", "X-Content-Type-Options: nosniff",
        "Referrer-Policy: no-referrer", "Cache-Control: no-store"}) {
    EXPECT_NE(with.find(header), std::string::npos) << header << "\n" << with;
    EXPECT_NE(page.find(header), std::string::npos) << header << "\n" << page;
  }
  EXPECT_EQ(with.find("Access-Control-"), std::string::npos) << "no CORS ever: " << with;
}

TEST_F(UiSecurity, NoCookieIs401OnEveryStateChangingEndpoint) {
  for (const auto& path : kChanging) {
    const auto a = ask("POST", path, "Origin: " + origin() + "\r\n");
    EXPECT_EQ(status_of(a), 401) << path << "\n" << a;
    const auto wrong =
        ask("POST", path, "Origin: " + origin() + "\r\nCookie: px_ui=" + std::string(64, 'a') + "\r\n");
    EXPECT_EQ(status_of(wrong), 401) << path << "\n" << wrong;
  }
  EXPECT_EQ(status_of(ask("GET", "/api/runs", "")), 401);
  EXPECT_EQ(status_of(ask("GET", "/api/events", "")), 401);
  EXPECT_FALSE(fs::exists(root_ / "runtime" / "parallex" / "paused")) << "nothing was paused";
}

TEST_F(UiSecurity, AnotherOriginIs403AndChangesNothing) {
  PlainServer other;  // the page of another port, as a CSRF page would be served
  for (const auto& path : kChanging) {
    for (const std::string& o :
         {"Origin: http://127.0.0.1:" + std::to_string(other.port()) + "\r\n",
          std::string("Origin: null\r\n"), "Origin: http://localhost:" + std::to_string(port_) + "\r\n",
          std::string()}) {
      const auto a = ask("POST", path, o + cookie());
      EXPECT_EQ(status_of(a), 403) << path << " " << o << "\n" << a;
    }
  }
  EXPECT_FALSE(fs::exists(root_ / "runtime" / "parallex" / "paused")) << "nothing was paused";
  // A form of the right origin is still no JSON: refused (forms cannot send JSON).
  const auto form =
      ask("POST", "/api/pause-all",
          "Origin: " + origin() + "\r\n" + cookie() + "Content-Type: application/x-www-form-urlencoded\r\n",
          "a=b");
  EXPECT_EQ(status_of(form), 415) << form;
  // The same request from the page itself works: the kill switch's pause file is written.
  const auto pause = ask("POST", "/api/pause-all", "Origin: " + origin() + "\r\n" + cookie());
  EXPECT_EQ(status_of(pause), 200) << pause;
  EXPECT_NE(pause.find("\"ok\":true"), std::string::npos) << pause;
  const auto resume = ask("POST", "/api/resume-all", "Origin: " + origin() + "\r\n" + cookie());
  EXPECT_EQ(status_of(resume), 200) << resume;
}

TEST_F(UiSecurity, AnotherHostIs403) {
  for (const std::string& h : {"localhost:" + std::to_string(port_), "evil.test:" + std::to_string(port_),
                               std::string("127.0.0.1"), std::string()}) {
    const auto a =
        http(port_, "GET /api/runs HTTP/1.1\r\nHost: " + h + "\r\nConnection: close\r\n" + cookie() + "\r\n");
    EXPECT_EQ(status_of(a), 403) << h << "\n" << a;
  }
}

TEST_F(UiSecurity, MalformedRequestsAreAnsweredNotCrashedOn) {
  for (const std::string& raw :
       {std::string("GARBAGE\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nHost: ") + std::string(20000, 'x') + "\r\n\r\n",
        std::string("POST /api/pause-all HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n")}) {
    (void)http(port_, raw);
  }
  // A body nested far deeper than any request needs (copying or printing it would recurse that
  // deep): refused before it is parsed, the server answers on.
  const std::string deep = "{\"path\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  const auto refused = ask("POST", "/api/agents/bob/grant",
                           cookie() + "Origin: " + origin() + "\r\nContent-Type: application/json\r\n", deep);
  EXPECT_EQ(status_of(refused), 400) << refused.substr(0, 400);
  EXPECT_NE(refused.find("not a JSON object"), std::string::npos) << refused.substr(0, 400);
  const auto still = ask("GET", "/api/runs", cookie());
  EXPECT_EQ(status_of(still), 200) << still;
}

// GET /api/events: a run's events arrive as server-sent events while it goes,
// each the line `parallex events --json` prints.
TEST_F(UiSecurity, TheEventStreamCarriesARunsEventsAsTheyCome) {
  px::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port_);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  timeval tv{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req = "GET /api/events HTTP/1.1\r\nHost: " + host() + "\r\n" + cookie() + "\r\n";
  ASSERT_GT(::send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL), 0);
  std::string got;
  char buf[4096];
  // The head first: the stream is open before the run starts.
  for (int i = 0; i < 10 && got.find("\n\n") == std::string::npos; ++i)
    if (const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0); n > 0)
      got.append(buf, static_cast<std::size_t>(n));
  ASSERT_NE(got.find("Content-Type: text/event-stream"), std::string::npos) << got;
  const auto r = sealed_run({}, "true");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (int i = 0; i < 20 && got.find("event: run.end") == std::string::npos; ++i)
    if (const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0); n > 0)
      got.append(buf, static_cast<std::size_t>(n));
  EXPECT_NE(got.find("event: run.start\ndata: {"), std::string::npos) << got;
  EXPECT_NE(got.find("event: run.end\ndata: {"), std::string::npos) << got;
  EXPECT_NE(got.find("\"type\":\"run.end\""), std::string::npos) << got;
}

// The port file: a live server's is listed, a dead one's is not (its lock is gone).
TEST(UiPorts, OnlyLiveServersPortsAreListed) {
  char templ[] = "/tmp/px-ui-ports-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const fs::path runtime = templ;
  {
    auto held = px::UiPortFile::publish(runtime, 4242);
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(px::live_ui_ports(runtime), std::vector<std::uint16_t>{4242});
  }
  EXPECT_TRUE(px::live_ui_ports(runtime).empty());
  // A file nobody holds (a server killed with SIGKILL, or one planted) opens nothing and closes nothing.
  {
    std::FILE* f = std::fopen((runtime / "ui" / "999.port").c_str(), "w");
    std::fputs("4343\n", f);
    std::fclose(f);
  }
  EXPECT_TRUE(px::live_ui_ports(runtime).empty());
  fs::remove_all(runtime);
}

// The heart of it: from inside a sealed run, the UI's port is refused, through
// the proxy and through the mirrored loopback ports, whether Local servers is
// off, on for every port, or names the UI's port; another server of the host
// on loopback is reached (so the refusal is the UI's, not Local servers').
TEST_F(UiSecurity, ASealedRunCannotReachIt) {
  PlainServer plain;
  const std::string ui = std::to_string(port_), other = std::to_string(plain.port());
  const std::string script =
      "for p in " + ui + " " + other +
      "; do echo \"proxied $p: $(curl -sS --max-time 5 http://localhost:$p/api/runs 2>&1)\"; "
      "echo \"direct $p: $(curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$p/api/runs 2>&1)\"; done; "
      "true";
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {}, {"--local-servers"}, {"--local-servers=" + ui + "," + other}}) {
    const auto r = sealed_run(flags, script);
    const std::string said = (flags.empty() ? "(off)" : flags[0]) + ":\n" + r.out + r.err;
    ASSERT_EQ(r.status, 0) << said;
    // Nothing of the UI's came back: no answer of its, no security header of its.
    EXPECT_EQ(r.out.find("Content-Security-Policy"), std::string::npos) << said;
    EXPECT_EQ(r.out.find("\"error\""), std::string::npos) << said;
    EXPECT_EQ(r.out.find("no key"), std::string::npos) << said;
    if (!flags.empty()) {
      EXPECT_NE(
          r.out.find("proxied " + ui + ": parallex proxy: this is the port of `parallex ui` on localhost"),
          std::string::npos)
          << said;
      EXPECT_NE(r.err.find("parallex-ui-port: localhost:" + ui), std::string::npos) << said;
      EXPECT_NE(r.out.find("proxied " + other + ": plain server"), std::string::npos) << said;
      EXPECT_NE(r.out.find("direct " + other + ": plain server"), std::string::npos) << said;
    }
  }
}

}  // namespace
