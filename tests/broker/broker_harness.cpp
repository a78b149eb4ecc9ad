#include "broker_harness.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <fstream>
#include <sstream>

#include "test_paths.hpp"

extern char** environ;

namespace px::broker::test {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using proxy::test::connect_to;
using proxy::test::read_until;
using proxy::test::send_all;
using proxy::test::status_of;

namespace {

void openssl_cmd(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult r = run_command(argv);
  if (r.status != 0) ADD_FAILURE() << "openssl failed: " << r.output;
}

// A certificate for `names`, signed by the CA in `dir` (or self-signed).
CertFiles make_cert(const std::filesystem::path& dir, const std::string& stem,
                    const std::vector<std::string>& names, bool self_signed) {
  CertFiles f{dir / (stem + ".crt"), dir / (stem + ".key")};
  std::string san = "subjectAltName=";
  for (std::size_t i = 0; i < names.size(); ++i) san += (i ? ",DNS:" : "DNS:") + names[i];
  const auto ext = dir / (stem + ".ext");
  write_file(ext, san + "\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n");
  if (self_signed) {
    openssl_cmd({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                 f.key.string(), "-out", f.cert.string(), "-subj", "/CN=" + names[0], "-days", "2", "-addext",
                 san});
    return f;
  }
  const auto csr = dir / (stem + ".csr");
  openssl_cmd({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
               f.key.string(), "-out", csr.string(), "-subj", "/CN=" + names[0]});
  openssl_cmd({"x509", "-req", "-in", csr.string(), "-CA", (dir / "ca.crt").string(), "-CAkey",
               (dir / "ca.key").string(), "-CAcreateserial", "-out", f.cert.string(), "-days", "2",
               "-extfile", ext.string()});
  return f;
}

}  // namespace

std::filesystem::path temp_dir(const std::string& name) {
  std::string templ = (std::filesystem::temp_directory_path() / ("px-broker-" + name + "-XXXXXX")).string();
  return ::mkdtemp(templ.data());
}

void write_file(const std::filesystem::path& path, const std::string& content, int mode) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  ::chmod(path.c_str(), static_cast<mode_t>(mode));
}

CommandResult run_with_env(const std::vector<std::string>& env, const std::vector<std::string>& argv) {
  std::vector<std::string> full = {"env"};
  for (const auto& e : env) {
    if (!e.empty() && e[0] == '-') {
      full.push_back("-u");
      full.push_back(e.substr(1));
    }
  }
  for (const auto& e : env) {
    if (!e.empty() && e[0] != '-') full.push_back(e);
  }
  full.insert(full.end(), argv.begin(), argv.end());
  return run_command(full);
}

std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& p) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(p));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

const TestPki& TestPki::get() {
  static const TestPki pki = [] {
    TestPki p;
    p.dir = temp_dir("pki");
    openssl_cmd({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                 (p.dir / "ca.key").string(), "-out", (p.dir / "ca.crt").string(), "-subj",
                 "/CN=broker test CA", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign"});
    p.ca_pem = read_file(p.dir / "ca.crt");
    p.server =
        make_cert(p.dir, "server", {"bound.test", "rules.test", "api.anthropic.test", "ws.test"}, false);
    p.wrong_name = make_cert(p.dir, "wrong", {"elsewhere.test"}, false);
    p.self_signed = make_cert(p.dir, "self", {"bound.test"}, true);
    set_test_upstream_ca(p.ca_pem);
    return p;
  }();
  // Removed when the test process exits (destroyed before `pki`).
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(pki.dir, ec);
    }
  } cleanup;
  return pki;
}

UpstreamServer::UpstreamServer(const CertFiles& cert, const std::filesystem::path& dir,
                               const std::filesystem::path& git_root, const std::string& git_secret) {
  record_ = dir / ("upstream-" + std::to_string(::getpid()) + "-" + cert.cert.stem().string() + ".jsonl");
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  // Its tracebacks (a relay that cuts a request short) go to a file, not the test's output.
  posix_spawn_file_actions_addopen(&fa, 2, (dir / "upstream-stderr.log").c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  std::vector<std::string> argv = {"python3", std::string(BROKER_TEST_DIR) + "/upstream_server.py",
                                   cert.cert.string(), cert.key.string(), record_.string()};
  if (!git_root.empty()) argv.push_back(git_root.string());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) env_store.emplace_back(*e);
  env_store.push_back("GIT_SECRET=" + git_secret);
  std::vector<char*> env;
  for (auto& e : env_store) env.push_back(e.data());
  env.push_back(nullptr);
  if (::posix_spawnp(&pid_, "python3", &fa, nullptr, args.data(), env.data()) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
  ::close(p[1]);
  const std::string line = read_until(p[0], "\n", std::chrono::seconds(10));
  ::close(p[0]);
  if (!line.empty()) port_ = static_cast<std::uint16_t>(std::stoi(line));
}

UpstreamServer::~UpstreamServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::vector<nlohmann::json> UpstreamServer::requests() const {
  return read_json_lines(record_);
}

Front::Front(std::shared_ptr<Broker> broker, std::function<std::uint16_t(const std::string&)> route,
             std::string capture_host)
    : broker_(std::move(broker)), route_(std::move(route)), capture_host_(std::move(capture_host)) {
  for (auto* acceptor : {&connect_acceptor_, &capture_acceptor_}) {
    acceptor->open(tcp::v4());
    acceptor->bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    acceptor->listen();
  }
  connect_port_ = connect_acceptor_.local_endpoint().port();
  capture_port_ = capture_acceptor_.local_endpoint().port();
  accept(connect_acceptor_, false);
  accept(capture_acceptor_, true);
  thread_ = std::thread([this] { io_.run(); });
}

Front::~Front() {
  asio::post(io_, [this] {
    boost::system::error_code ig;
    connect_acceptor_.close(ig);
    capture_acceptor_.close(ig);
    broker_->abort_all("stopped");
  });
  // Give the aborts a moment to run, then stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  io_.stop();
  thread_.join();
}

std::vector<RelayEnd> Front::ends() const {
  std::lock_guard lock(mutex_);
  return ends_;
}

bool Front::wait_ends(std::size_t n, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ends().size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void Front::accept(tcp::acceptor& acceptor, bool capture) {
  acceptor.async_accept([this, &acceptor, capture](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec) return;
    handle(std::make_shared<tcp::socket>(std::move(socket)), capture);
    accept(acceptor, capture);
  });
}

void Front::handle(std::shared_ptr<tcp::socket> socket, bool capture) {
  auto buf = std::make_shared<std::array<char, 4096>>();
  if (capture) {
    // As the proxy does for a captured connection: the first bytes (the
    // start of the ClientHello) are read before the hand-over.
    socket->async_read_some(
        asio::buffer(*buf), [this, socket, buf](const boost::system::error_code& ec, std::size_t n) {
          if (ec) return;
          {
            std::lock_guard lock(mutex_);
            early_total_ += n;
          }
          hand_over(std::move(*socket), std::string(buf->data(), n), capture_host_, capture_port_);
        });
    return;
  }
  auto head = std::make_shared<asio::streambuf>();
  asio::async_read_until(
      *socket, *head, "\r\n\r\n", [this, socket, head](const boost::system::error_code& ec, std::size_t n) {
        if (ec) return;
        std::string text(asio::buffers_begin(head->data()),
                         asio::buffers_begin(head->data()) + static_cast<long>(n));
        std::string leftover(asio::buffers_begin(head->data()) + static_cast<long>(n),
                             asio::buffers_end(head->data()));
        const auto sp = text.find(' ');
        const auto colon = text.find(':', sp);
        const auto sp2 = text.find(' ', colon);
        if (text.rfind("CONNECT ", 0) != 0 || colon == std::string::npos || sp2 == std::string::npos) return;
        const std::string host = text.substr(sp + 1, colon - sp - 1);
        const auto port = static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1, sp2 - colon - 1)));
        auto reply = std::make_shared<std::string>("HTTP/1.1 200 Connection Established\r\n\r\n");
        asio::async_write(
            *socket, asio::buffer(*reply),
            [this, socket, reply, host, port, leftover](const boost::system::error_code& wec, std::size_t) {
              if (wec) return;
              hand_over(std::move(*socket), leftover, host, port);
            });
      });
}

void Front::hand_over(tcp::socket client, std::string early, const std::string& host, std::uint16_t port) {
  tcp::socket upstream(io_);
  boost::system::error_code ec;
  upstream.connect(tcp::endpoint(asio::ip::address_v4::loopback(), route_(host)), ec);
  if (ec) return;
  broker_->relay(std::move(client), std::move(early), std::move(upstream), host, port,
                 [this](const RelayEnd& end) {
                   std::lock_guard lock(mutex_);
                   ends_.push_back(end);
                 });
}

TlsResult tls_exchange(std::uint16_t front_port, const std::string& host, std::uint16_t port,
                       const std::string& request, const TlsOptions& options) {
  TlsResult result;
  const int fd = connect_to(front_port);
  if (fd < 0) {
    result.error = "cannot connect to the front";
    return result;
  }
  const std::string authority = host + ":" + std::to_string(port);
  send_all(fd, "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
  const std::string answer = read_until(fd, "\r\n\r\n", options.timeout);
  result.connected = status_of(answer) == 200;
  if (!result.connected) {
    ::close(fd);
    result.error = "CONNECT: " + answer;
    return result;
  }
  TlsResult tls = tls_on_socket(fd, options.sni.empty() ? host : options.sni, request, options);
  tls.connected = true;
  ::close(fd);
  return tls;
}

TlsResult tls_on_socket(int fd, const std::string& sni, const std::string& request,
                        const TlsOptions& options) {
  TlsResult result;
  timeval tv{static_cast<time_t>(options.timeout.count() / 1000),
             static_cast<suseconds_t>(options.timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (options.ca_file.empty()) {
    SSL_CTX_set_default_verify_paths(ctx);
  } else {
    SSL_CTX_load_verify_file(ctx, options.ca_file.c_str());
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  // SSL_set_tlsext_host_name, spelled out (the macro is a C cast).
  SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(sni.c_str()));
  SSL_set1_host(ssl, sni.c_str());
  if (SSL_connect(ssl) != 1) {
    const long v = SSL_get_verify_result(ssl);
    char buf[256] = "";
    ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
    result.error =
        std::string(buf) + (v != X509_V_OK ? std::string(" / ") + X509_verify_cert_error_string(v) : "");
  } else {
    result.handshake = true;
    SSL_write(ssl, request.data(), static_cast<int>(request.size()));
    char buf[16384];
    for (;;) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) break;
      result.response.append(buf, static_cast<std::size_t>(n));
    }
  }
  ERR_clear_error();
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return result;
}

void BrokerTest::SetUp() {
  const TestPki& pki = TestPki::get();
  dir_ = temp_dir("t");
  upstream_ = std::make_unique<UpstreamServer>(pki.server, dir_);
  ASSERT_TRUE(upstream_->running()) << "the upstream server did not start (python3 with ssl is needed)";
}

void BrokerTest::TearDown() {
  front_.reset();
  broker_.reset();
  upstream_.reset();
  std::filesystem::remove_all(dir_);
}

std::uint16_t BrokerTest::route(const std::string& host) const {
  const auto it = routes_.find(host);
  return it != routes_.end() ? it->second : upstream_->port();
}

void BrokerTest::start(const std::function<void(BrokerConfig&)>& tweak) {
  write_file(dir_ / "github-token", kGithubSecret + "\n");
  write_file(dir_ / "anthropic-key", kAnthropicSecret);
  std::filesystem::create_directories(dir_ / "state");
  BrokerConfig c;
  c.state_dir = dir_ / "state";
  c.request_log = dir_ / "requests.jsonl";
  c.limits.header_timeout = std::chrono::seconds(3);

  CredentialSpec github;
  github.name = "github";
  github.source = SecretSource::from_file(dir_ / "github-token");
  github.hosts = {"bound.test"};
  github.env = {"GH_TOKEN", "GITHUB_TOKEN"};
  github.shape = "github-token";
  CredentialSpec anthropic;
  anthropic.name = "anthropic";
  anthropic.source = SecretSource::from_command({"cat", (dir_ / "anthropic-key").string()});
  anthropic.hosts = {"api.anthropic.test"};
  anthropic.env = {"ANTHROPIC_API_KEY"};
  c.credentials = {github, anthropic};

  // rules.test: "push only to my repos" on a GitHub-like path layout.
  const auto rule = [](std::string_view action, std::string_view spec, std::string reason = {}) {
    auto r = parse_request_rule(action, spec, std::move(reason));
    if (!r) {
      ADD_FAILURE() << r.error().message;
      return RequestRule{};
    }
    return r.value();
  };
  HostRequestRules rules;
  rules.host = "rules.test";
  rules.rules = {rule("allow", "GET,HEAD /**"), rule("allow", "POST /o/r.git/git-receive-pack"),
                 rule("deny", "* /**", "push only to my repos")};
  c.hosts.push_back(rules);
  HostRequestRules ws;
  ws.host = "ws.test";
  ws.rules = {rule("allow", "GET /ws")};
  c.hosts.push_back(ws);

  if (tweak) tweak(c);
  auto b = Broker::create(c);
  ASSERT_TRUE(b) << b.error().message;
  broker_ = std::move(b).value();
  front_ = std::make_unique<Front>(
      broker_, [this](const std::string& h) { return route(h); }, "api.anthropic.test");
}

std::string BrokerTest::placeholder(const std::string& credential) const {
  for (const auto& c : broker_->credentials().credentials()) {
    if (c.name == credential) return c.placeholder;
  }
  return {};
}

}  // namespace px::broker::test
