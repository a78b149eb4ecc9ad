// The broker's cost, in one process on loopback: a TLS test server and the
// parallex proxy, as a plain CONNECT tunnel and with the run's broker wired in
// (proxy/terminator.hpp: the same CONNECT, terminated), measured side by side
// with the same client and against the server reached directly: keep-alive requests per second and their
// p50/p99 latency, new connections (TCP + CONNECT + TLS + one request) p50/p99, and one 1 GiB GiB of
// responses: MB/s and the CPU the relay spent per GiB (the process's CPU minus the client's and the server's
// threads).
//   broker_bench [--requests N] [--connections N] [--bytes N] [--rounds R]
// Then a probe of kernel TLS (SSL_OP_ENABLE_KTLS) on this machine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../../tests/broker/test_upstream_trust.hpp"
#include "broker/broker.hpp"
#include "broker/run_ca.hpp"
#include "proxy/proxy.hpp"

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using px::broker::Broker;

const std::string kHost = "bench.test";
const std::string kPassword = "0123456789abcdef0123456789abcdef";

double thread_cpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double process_cpu() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto sec = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

int listen_loopback(std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  ::listen(fd, 1024);
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  port = ntohs(sin.sin_port);
  return fd;
}

int connect_port(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::string read_head_plain(int fd) {
  std::string out;
  char c;
  while (out.find("\r\n\r\n") == std::string::npos && ::read(fd, &c, 1) == 1) out += c;
  return out;
}

// ---- the TLS test server: GET /small (13 bytes) and GET /bulk?n=N ----

std::atomic<double> server_cpu{0};

void ssl_write_all(SSL* ssl, const char* data, std::size_t n) {
  while (n > 0) {
    const int w = SSL_write(ssl, data, static_cast<int>(std::min<std::size_t>(n, 1 << 20)));
    if (w <= 0) return;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

void serve(SSL_CTX* ctx, int fd) {
  const double cpu0 = thread_cpu();
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) == 1) {
    std::string in;
    char buf[16384];
    std::vector<char> block(256 * 1024, 'x');
    for (;;) {
      std::size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        const int n = SSL_read(ssl, buf, sizeof buf);
        if (n <= 0) goto done;
        in.append(buf, static_cast<std::size_t>(n));
      }
      const std::string head = in.substr(0, end + 4);
      in.erase(0, end + 4);
      if (head.rfind("GET /bulk?n=", 0) == 0) {
        std::size_t left = std::stoull(head.substr(12));
        const std::string h = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(left) + "\r\n\r\n";
        ssl_write_all(ssl, h.data(), h.size());
        while (left > 0) {
          const std::size_t n = std::min(left, block.size());
          ssl_write_all(ssl, block.data(), n);
          left -= n;
        }
      } else {
        static const std::string small = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nhello, bench\n";
        ssl_write_all(ssl, small.data(), small.size());
      }
    }
  }
done:
  SSL_free(ssl);
  ::close(fd);
  double cur = server_cpu.load();
  while (!server_cpu.compare_exchange_weak(cur, cur + thread_cpu() - cpu0)) {
  }
}

// ---- the client ----

struct Path {
  std::string label;
  std::uint16_t connect_port = 0;  // 0: direct to the server
  bool proxy_auth = false;
  std::string ca_pem;  // what the client trusts
};

struct Client {
  int fd = -1;
  SSL* ssl = nullptr;
  SSL_CTX* ctx = nullptr;
  ~Client() {
    if (ssl) SSL_free(ssl);
    if (ctx) SSL_CTX_free(ctx);
    if (fd >= 0) ::close(fd);
  }
};

std::unique_ptr<Client> open_client(const Path& p, std::uint16_t server_port) {
  auto c = std::make_unique<Client>();
  if (p.connect_port == 0) {
    c->fd = connect_port(server_port);
  } else {
    c->fd = connect_port(p.connect_port);
    const std::string authority = kHost + ":" + std::to_string(server_port);
    std::string req = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (p.proxy_auth)
      req += "Proxy-Authorization: Basic cHg6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\r\n";
    write_all(c->fd, req + "\r\n");
    if (read_head_plain(c->fd).find(" 200") == std::string::npos) {
      std::fprintf(stderr, "%s: the CONNECT was refused\n", p.label.c_str());
      std::exit(1);
    }
  }
  c->ctx = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_mem_buf(p.ca_pem.data(), static_cast<int>(p.ca_pem.size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(c->ctx), ca);
  X509_free(ca);
  SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, nullptr);
  c->ssl = SSL_new(c->ctx);
  SSL_set_fd(c->ssl, c->fd);
  SSL_ctrl(c->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(kHost.c_str()));
  SSL_set1_host(c->ssl, kHost.c_str());
  if (SSL_connect(c->ssl) != 1) {
    std::fprintf(stderr, "%s: TLS handshake failed\n", p.label.c_str());
    std::exit(1);
  }
  return c;
}

// One request, its whole response read (Content-Length framing).
std::size_t request(Client& c, const std::string& path, std::vector<char>& buf) {
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: " + kHost + "\r\n\r\n";
  SSL_write(c.ssl, req.data(), static_cast<int>(req.size()));
  std::string head;
  std::size_t body = 0;
  for (;;) {
    const int n = SSL_read(c.ssl, buf.data(), static_cast<int>(buf.size()));
    if (n <= 0) return 0;
    head.append(buf.data(), static_cast<std::size_t>(n));
    const auto end = head.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const auto cl = head.find("Content-Length: ");
    const std::size_t length = std::stoull(head.substr(cl + 16));
    body = head.size() - end - 4;
    while (body < length) {
      const int m =
          SSL_read(c.ssl, buf.data(), static_cast<int>(std::min<std::size_t>(buf.size(), length - body)));
      if (m <= 0) return 0;
      body += static_cast<std::size_t>(m);
    }
    return body;
  }
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

// What one path collected over the rounds.
struct Samples {
  std::vector<double> latency_us, rps, relay_us_per_request, conn_us, mbps, relay_ms_per_gib;
};

// One round of a path: keep-alive requests, new connections, one bulk response.
void round(const Path& p, std::uint16_t server_port, int requests, int connections, std::size_t bytes,
           Samples& s) {
  std::vector<char> buf(256 * 1024);
  {
    auto c = open_client(p, server_port);
    for (int i = 0; i < 100; ++i) request(*c, "/small", buf);  // warm up
    const double server0 = server_cpu.load();
    const double proc0 = process_cpu();
    const double client0 = thread_cpu();
    const auto t0 = Clock::now();
    for (int i = 0; i < requests; ++i) {
      const auto a = Clock::now();
      request(*c, "/small", buf);
      s.latency_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    }
    s.rps.push_back(requests / std::chrono::duration<double>(Clock::now() - t0).count());
    const double client = thread_cpu() - client0;
    c.reset();  // the server's thread ends and adds its CPU (with the warm-up's, a rounding error)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double relay = process_cpu() - proc0 - client - (server_cpu.load() - server0);
    s.relay_us_per_request.push_back(relay * 1e6 / requests);
  }
  for (int i = 0; i < connections; ++i) {
    const auto a = Clock::now();
    auto c = open_client(p, server_port);
    request(*c, "/small", buf);
    s.conn_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  auto c = open_client(p, server_port);
  const double server0 = server_cpu.load();
  const double proc0 = process_cpu();
  const double client0 = thread_cpu();
  const auto t0 = Clock::now();
  const std::size_t got = request(*c, "/bulk?n=" + std::to_string(bytes), buf);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  const double client = thread_cpu() - client0;
  c.reset();  // the server's thread ends and adds its CPU
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double relay = process_cpu() - proc0 - client - (server_cpu.load() - server0);
  if (got != bytes) std::fprintf(stderr, "%s: %zu of %zu bytes\n", p.label.c_str(), got, bytes);
  s.mbps.push_back(static_cast<double>(got) / 1e6 / secs);
  s.relay_ms_per_gib.push_back(relay * 1000.0 * static_cast<double>(1ULL << 30) / static_cast<double>(got));
}

// Kernel TLS: does this kernel and this OpenSSL move records into the kernel?
void ktls_probe(const px::broker::Leaf& leaf, const std::string& ca_pem) {
  std::string ulps;
  std::ifstream("/proc/sys/net/ipv4/tcp_available_ulp") >> ulps;
  std::uint16_t port = 0;
  const int lfd = listen_loopback(port);
  SSL_CTX* sctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_use_certificate(sctx, leaf.certificate.get());
  SSL_CTX_use_PrivateKey(sctx, leaf.key);
  SSL_CTX_set_options(sctx, SSL_OP_ENABLE_KTLS);
  int send_on = -1, recv_on = -1;
  std::thread server([&] {
    const int fd = ::accept(lfd, nullptr, nullptr);
    SSL* ssl = SSL_new(sctx);
    SSL_set_fd(ssl, fd);  // a socket BIO: kTLS needs one (Asio's SSL stream uses memory BIOs)
    if (SSL_accept(ssl) == 1) {
      send_on = BIO_get_ktls_send(SSL_get_wbio(ssl)) ? 1 : 0;
      recv_on = BIO_get_ktls_recv(SSL_get_rbio(ssl)) ? 1 : 0;
      SSL_write(ssl, "x", 1);
    }
    SSL_free(ssl);
    ::close(fd);
  });
  Path p{"probe", 0, false, ca_pem};
  {
    auto c = open_client(p, port);
    char b;
    SSL_read(c->ssl, &b, 1);
  }
  server.join();
  ::close(lfd);
  SSL_CTX_free(sctx);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int r = ::setsockopt(fd, SOL_TCP, TCP_ULP, "tls", sizeof "tls");
  const int err = errno;
  ::close(fd);
  std::printf(
      "\nkTLS: SSL_OP_ENABLE_KTLS on a socket BIO -> send offload %s, receive offload %s; "
      "tcp_available_ulp: \"%s\"; setsockopt(TCP_ULP, \"tls\") on a fresh socket: %s\n",
      send_on == 1 ? "ON" : "off", recv_on == 1 ? "ON" : "off", ulps.c_str(),
      r == 0 ? "accepted" : std::strerror(err));
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 6000, connections = 300, rounds = 3;
  std::size_t bytes = std::size_t{3} << 30;  // 1 GiB per round
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--requests") requests = std::stoi(argv[i + 1]);
    if (a == "--connections") connections = std::stoi(argv[i + 1]);
    if (a == "--bytes") bytes = std::stoull(argv[i + 1]);
    if (a == "--rounds") rounds = std::max(1, std::stoi(argv[i + 1]));
  }
  const auto dir = std::filesystem::temp_directory_path() / ("px-broker-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");

  // The server's certificate comes from a CA of its own, which the broker's
  // upstream side trusts through the tests' trust hook (linked in here).
  auto server_ca = px::broker::RunCa::create({kHost});
  if (!server_ca) return std::fprintf(stderr, "%s\n", server_ca.error().message.c_str()), 1;
  auto leaf = server_ca.value()->leaf_for(kHost).value();
  px::broker::test::set_test_upstream_ca(server_ca.value()->certificate_pem());
  SSL_CTX* sctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_use_certificate(sctx, leaf->certificate.get());
  SSL_CTX_use_PrivateKey(sctx, leaf->key);
  std::uint16_t server_port = 0;
  const int lfd = listen_loopback(server_port);
  std::thread([sctx, lfd] {
    for (;;) {
      const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) std::thread(serve, sctx, fd).detach();
    }
  }).detach();

  // The proxy: a plain tunnel, or (with `terminator`) the run's broker wired in.
  const auto make_proxy = [&](std::shared_ptr<px::proxy::Terminator> terminator) {
    px::proxy::ProxyConfig pc;
    pc.mode = px::proxy::NetworkMode::allowlist;
    pc.allowed_hosts = {kHost};
    pc.allowed_ports = {server_port};
    pc.local_servers = true;
    pc.password = kPassword;
    pc.terminator = std::move(terminator);
    auto p = px::proxy::ProxyServer::listen(pc, "127.0.0.1", 0, [](const std::string&) {
      return px::Result<std::vector<asio::ip::address>>(
          std::vector<asio::ip::address>{asio::ip::make_address("127.0.0.1")});
    });
    if (!p) {
      std::fprintf(stderr, "%s\n", p.error().message.c_str());
      std::exit(1);
    }
    return std::move(p).value();
  };
  auto proxy = make_proxy(nullptr);

  // Two brokers: one with a credential bound to the host (responses are
  // scanned for the secret), one with request rules only.
  const auto make_broker = [&](bool credential, const std::filesystem::path& state) {
    px::broker::BrokerConfig bc;
    bc.state_dir = state;
    bc.request_log = state / "requests.jsonl";
    if (credential) {
      px::broker::CredentialSpec spec;
      spec.name = "bench";
      spec.source = px::broker::SecretSource::from_value("sk-ant-api03-" + std::string(93, 'k') + "AA");
      spec.hosts = {kHost};
      bc.credentials = {spec};
    } else {
      px::broker::HostRequestRules rules;
      rules.host = kHost;
      rules.rules = {px::broker::parse_request_rule("allow", "GET /**").value()};
      bc.hosts = {rules};
    }
    auto b = Broker::create(bc);
    if (!b) {
      std::fprintf(stderr, "%s\n", b.error().message.c_str());
      std::exit(1);
    }
    return std::move(b).value();
  };
  auto with_credential = make_broker(true, dir / "a");
  auto with_rules = make_broker(false, dir / "b");
  auto proxy_credential = make_proxy(with_credential);
  auto proxy_rules = make_proxy(with_rules);
  const auto read_all = [](const std::filesystem::path& f) {
    std::ifstream in(f);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };

  const std::string server_ca_pem = server_ca.value()->certificate_pem();
  const std::vector<Path> paths = {
      {"direct", 0, false, server_ca_pem},
      {"tunnel (proxy CONNECT)", proxy->port(), true, server_ca_pem},
      {"terminated, rules", proxy_rules->port(), true, read_all(with_rules->trust_files().ca)},
      {"terminated, credential", proxy_credential->port(), true, read_all(with_credential->trust_files().ca)},
  };
  // Rounds interleaved across the paths, so that a load that comes and goes
  // on the machine falls on every path alike; the medians are printed.
  std::vector<Samples> samples(paths.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < paths.size(); ++i) {
      round(paths[i], server_port, requests / rounds, connections / rounds,
            bytes / static_cast<std::size_t>(rounds), samples[i]);
    }
  }
  const double direct_rps = percentile(samples[0].rps, 0.5);
  std::printf(
      "%d rounds; %d keep-alive requests, %d new connections, %zu MiB of responses per path; medians\n",
      rounds, requests, connections, bytes >> 20);
  std::printf("| %-22s | %9s | %8s | %8s | %13s | %9s | %9s | %9s | %6s | %14s |\n", "path", "req/s",
              "p50 us", "p99 us", "relay CPU/req", "conn p50", "conn p99", "vs direct", "MB/s",
              "relay CPU/GiB");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(24, '-').c_str(), std::string(11, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str(), std::string(15, '-').c_str(),
              std::string(11, '-').c_str(), std::string(11, '-').c_str(), std::string(11, '-').c_str(),
              std::string(8, '-').c_str(), std::string(16, '-').c_str());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const Samples& x = samples[i];
    const double rps = percentile(x.rps, 0.5);
    std::printf(
        "| %-22s | %9.0f | %8.0f | %8.0f | %10.1f us | %6.0f us | %6.0f us | %8.0f%% | %6.0f | %11.0f ms |\n",
        paths[i].label.c_str(), rps, percentile(x.latency_us, 0.5), percentile(x.latency_us, 0.99),
        i == 0 ? 0.0 : percentile(x.relay_us_per_request, 0.5), percentile(x.conn_us, 0.5),
        percentile(x.conn_us, 0.99), 100.0 * rps / direct_rps, percentile(x.mbps, 0.5),
        i == 0 ? 0.0 : percentile(x.relay_ms_per_gib, 0.5));
  }
  ktls_probe(*leaf, server_ca_pem);
  proxy->stop();
  proxy_rules->stop();
  proxy_credential->stop();
  std::filesystem::remove_all(dir);
  return 0;
}
