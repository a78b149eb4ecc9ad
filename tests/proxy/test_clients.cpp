// Real clients through the proxy: curl, git (smart HTTP from git http-backend),
// and the `parallex proxy` command itself.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "harness.hpp"
#include "proxy/reasons.hpp"
#include "test_paths.hpp"

extern char** environ;

namespace px::proxy::test {
namespace {

using namespace std::chrono_literals;

// A child whose stdout (and stderr) we read line by line.
struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string buffered;

  static Child spawn(const std::vector<std::string>& argv) {
    Child c;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return c;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (::posix_spawnp(&c.pid, args[0], &fa, nullptr, args.data(), environ) != 0) c.pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(p[1]);
    c.out = p[0];
    return c;
  }
  std::string line(std::chrono::milliseconds timeout = 10s) {
    buffered += read_until(out, "\n", timeout);
    const auto nl = buffered.find('\n');
    if (nl == std::string::npos) return {};
    std::string l = buffered.substr(0, nl);
    buffered.erase(0, nl + 1);
    return l;
  }
  std::string rest() { return buffered + read_until(out, {}, 5s); }
  int stop(int sig = SIGTERM) {
    if (pid <= 0) return -1;
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~Child() {
    if (pid > 0) stop(SIGKILL);
    if (out >= 0) ::close(out);
  }
};

std::string proxy_url(std::uint16_t port) {
  return "http://px:" + kPassword + "@127.0.0.1:" + std::to_string(port);
}

TEST_F(ProxyTest, CurlPlainHttpAndConnectTunnel) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  start();
  const std::string url = "http://allowed.test:" + std::to_string(http_.port()) + "/x";
  CommandResult plain = run_command({"curl", "-sS", "--max-time", "10", "-x", proxy_url(port_), url});
  EXPECT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(plain.output, "hello from upstream");
  // -p: the same request through a CONNECT tunnel.
  CommandResult tunnel = run_command({"curl", "-sS", "-p", "--max-time", "10", "-x", proxy_url(port_), url});
  EXPECT_EQ(tunnel.status, 0) << tunnel.output;
  EXPECT_EQ(tunnel.output, "hello from upstream");
  ASSERT_EQ(http_.requests().size(), 2u);
  for (const auto& r : http_.requests()) EXPECT_EQ(r.find("Proxy-Authorization"), std::string::npos) << r;

  // Refused: curl shows the status, nothing is resolved.
  CommandResult denied =
      run_command({"curl", "-sS", "-p", "--max-time", "10", "-x", proxy_url(port_), "https://evil.test/"});
  EXPECT_NE(denied.status, 0);
  EXPECT_NE(denied.output.find("403"), std::string::npos) << denied.output;
  CommandResult denied_plain =
      run_command({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-x",
                   proxy_url(port_), "http://evil.test/?d=x"});
  EXPECT_EQ(denied_plain.output, "403");
  CommandResult no_password =
      run_command({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "-x",
                   "http://127.0.0.1:" + std::to_string(port_), url});
  EXPECT_EQ(no_password.output, "407");
  const auto asked = resolver_.asked();
  EXPECT_EQ(std::count(asked.begin(), asked.end(), "evil.test"), 0);
}

TEST_F(ProxyTest, GitClonesOverHttpThroughTheProxy) {
  if (!have_tool("git") || !have_tool("python3")) GTEST_SKIP() << "git or python3 is not installed";
  if (run_command({"git", "http-backend", "--help"}).output.empty() &&
      !std::filesystem::exists("/usr/lib/git-core/git-http-backend")) {
    GTEST_SKIP() << "git http-backend is not available";
  }
  const auto root = temp_dir("git");
  const std::vector<std::string> genv = {"HOME=" + root.string(), "GIT_CONFIG_NOSYSTEM=1",
                                         "GIT_AUTHOR_NAME=t",     "GIT_AUTHOR_EMAIL=t@t",
                                         "GIT_COMMITTER_NAME=t",  "GIT_COMMITTER_EMAIL=t@t"};
  ASSERT_EQ(run_command({"git", "init", "-q", "--bare", (root / "repo.git").string()}, genv).status, 0);
  ASSERT_EQ(run_command({"git", "init", "-q", (root / "work").string()}, genv).status, 0);
  {
    std::ofstream f(root / "work" / "README");
    f << "sealed but reachable\n";
  }
  const std::string work = (root / "work").string();
  ASSERT_EQ(run_command({"git", "-C", work, "add", "README"}, genv).status, 0);
  ASSERT_EQ(run_command({"git", "-C", work, "commit", "-q", "-m", "one"}, genv).status, 0);
  ASSERT_EQ(run_command(
                {"git", "-C", work, "push", "-q", (root / "repo.git").string(), "HEAD:refs/heads/main"}, genv)
                .status,
            0);
  ASSERT_EQ(
      run_command(
          {"git", "--git-dir", (root / "repo.git").string(), "symbolic-ref", "HEAD", "refs/heads/main"}, genv)
          .status,
      0);

  Child server =
      Child::spawn({"python3", std::string(PROXY_TEST_DIR) + "/git_http_server.py", root.string()});
  ASSERT_GT(server.pid, 0);
  const std::string port_line = server.line();
  ASSERT_FALSE(port_line.empty()) << "the git http server did not start";
  const auto git_port = static_cast<std::uint16_t>(std::stoi(port_line));

  start([&](ProxyConfig& c) {
    c.allowed_hosts = {"gitsrv.test"};
    c.allowed_ports = {git_port};
  });
  // Default http.proxyAuthMethod (anyauth): git first asks without the
  // password, gets 407, and retries with Basic.
  CommandResult clone =
      run_command({"git", "-c", "http.proxy=" + proxy_url(port_), "clone", "-q",
                   "http://gitsrv.test:" + std::to_string(git_port) + "/repo.git", (root / "clone").string()},
                  genv);
  EXPECT_EQ(clone.status, 0) << clone.output;
  EXPECT_EQ(read_file(root / "clone" / "README"), "sealed but reachable\n");
  server.stop();
  proxy_->stop();
  bool allowed = false;
  for (const auto& l : log_lines()) allowed = allowed || (l["verdict"] == "allowed" && l["method"] == "POST");
  EXPECT_TRUE(allowed) << "the upload-pack POST went through the proxy";
  // git's first, password-less request got the 407 challenge, which it answered: no refusal.
  for (const auto& r : proxy_->refused_hosts()) ADD_FAILURE() << "refused " << r.host << ": " << r.reason;
  std::filesystem::remove_all(root);
}

TEST(ProxyCommand, ListensPrintsAddressAndStopsOnSigterm) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  Upstream upstream(Upstream::Mode::http);
  const auto dir = temp_dir("cmd");
  const auto pw_file = dir / "password";
  const auto log = dir / "log.jsonl";
  Child proxy = Child::spawn({PARALLEX_EXE, "proxy", "--listen", "127.0.0.1:0", "--local-servers",
                              "--password-file", pw_file.string(), "--log", log.string()});
  ASSERT_GT(proxy.pid, 0);
  const std::string address = proxy.line();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address << proxy.rest();
  const auto password = read_password_file(pw_file);
  ASSERT_TRUE(password) << password.error().message;
  EXPECT_EQ(password.value().size(), 32u);
  // The password is in no argv.
  const std::string cmdline = read_file("/proc/" + std::to_string(proxy.pid) + "/cmdline");
  EXPECT_EQ(cmdline.find(password.value()), std::string::npos);

  const std::string purl = "http://px:" + password.value() + "@" + address;
  CommandResult ok = run_command({"curl", "-sS", "--max-time", "10", "-x", purl,
                                  "http://localhost:" + std::to_string(upstream.port()) + "/"});
  EXPECT_EQ(ok.output, "hello from upstream");
  CommandResult refused = run_command({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time",
                                       "10", "-x", purl, "http://example.invalid/"});
  EXPECT_EQ(refused.output, "403");

  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(proxy.stop(SIGTERM), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  const std::string tail = proxy.rest();
  EXPECT_NE(tail.find("blocked-by-allowlist: example.invalid:80"), std::string::npos) << tail;
  EXPECT_EQ(tail.find(password.value()), std::string::npos);
  const std::string log_text = read_file(log);
  EXPECT_NE(log_text.find("\"verdict\":\"allowed\""), std::string::npos) << log_text;
  EXPECT_EQ(log_text.find(password.value()), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ProxyCommand, RefusesConflictingOptions) {
  // The password file the command makes for itself (none was named) goes
  // with a refusal too: nothing is left in its TMPDIR.
  const auto tmp = temp_dir("refusal-tmp");
  const std::string env = "TMPDIR=" + tmp.string();
  CommandResult r = run_command({PARALLEX_EXE, "proxy", "--online", "--allow", "a.test"}, {env});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("--online"), std::string::npos) << r.output;
  r = run_command({PARALLEX_EXE, "proxy", "--allow", "10.0.0.1"}, {env});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("IP address"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "left in " << tmp;
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace px::proxy::test
