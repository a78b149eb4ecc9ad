// Measures the ways a program reaches a server through a sealed run's network:
// captured (connect to the name's synthetic address), CONNECT through the
// run's proxy, and direct (outside any seal, for the baseline); plus the
// run's DNS answer time. Built and driven by capture.sh.
//   capture_bench --serve                                  prints its port, serves until killed
//   capture_bench --label L --host H --port P [--connect]  inside a run (--connect: through $HTTPS_PROXY)
//   capture_bench --label L --dns NAME                     DNS answer times (warm, and new names under NAME)
//   capture_bench --label L --host H --port P [--connect] --burst N
//                                                          N connections opened at once and held
// Prints one tab-separated line: label, p50 us, p99 us, MB/s (best of three 1 GiB transfers);
// with --burst: label, N, answered, refused, ms until the last one answered.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

using bench::b64;
using bench::read_head;
using bench::read_until;
using bench::serve;
using bench::write_all;

using Clock = std::chrono::steady_clock;

struct Where {
  sockaddr_storage address{};
  socklen_t len = 0;
};

Where resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list) != 0 || !list) {
    std::fprintf(stderr, "cannot resolve %s\n", host.c_str());
    std::exit(1);
  }
  Where w;
  std::memcpy(&w.address, list->ai_addr, list->ai_addrlen);
  w.len = list->ai_addrlen;
  ::freeaddrinfo(list);
  return w;
}

int connect_to(const Where& w) {
  const int fd = ::socket(w.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&w.address), w.len) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

struct Path {
  Where target;              // the server (captured, direct) or the proxy (CONNECT)
  std::string connect_line;  // CONNECT request, when through the proxy
};

int open_path(const Path& p) {
  const int fd = connect_to(p.target);
  if (!p.connect_line.empty()) {
    write_all(fd, p.connect_line);
    const std::string head = read_head(fd);
    if (head.find(" 200") == std::string::npos) {
      std::fprintf(stderr, "tunnel refused: %s\n", head.c_str());
      std::exit(1);
    }
  }
  return fd;
}

// A burst: `n` connections opened at once (non-blocking connects, all in
// flight together, as a client pool or a load test opens them), then on each
// the CONNECT and its 200 (through the proxy) and one round trip, all held
// open until the last answered. A connection refused (reset, or closed with
// no answer) is counted, not waited for.
void burst(const Path& p, int n, const std::string& label) {
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &nofile);
  const auto t0 = Clock::now();
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(p.target.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      std::perror("socket");
      std::exit(1);
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&p.target.address), p.target.len) != 0 &&
        errno != EINPROGRESS) {
      std::perror("connect");
      std::exit(1);
    }
    fds.push_back(fd);
  }
  int answered = 0, refused = 0;
  for (const int fd : fds) {
    pollfd w{fd, POLLOUT, 0};
    int err = ::poll(&w, 1, 30000) == 1 ? 0 : ETIMEDOUT;
    socklen_t len = sizeof err;
    if (err == 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    bool ok = err == 0;
    if (ok && !p.connect_line.empty()) {
      write_all(fd, p.connect_line);
      ok = read_head(fd).find(" 200") != std::string::npos;
    }
    if (ok) {
      write_all(fd, "PING\n");
      ok = read_until(fd, "PONG\n").find("PONG\n") != std::string::npos;
    }
    ok ? ++answered : ++refused;
  }
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  for (const int fd : fds) ::close(fd);
  std::printf("%s\t%d\t%d\t%d\t%.0f\n", label.c_str(), n, answered, refused, ms);
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

int serve_forever() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  ::listen(fd, 4096);
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  std::printf("%d\n", ntohs(sin.sin_port));
  std::fflush(stdout);
  while (true) {
    const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) std::thread(serve, c).detach();
  }
}

// One A query over UDP to the run's DNS; microseconds to the answer.
double dns_query(const std::string& name) {
  std::string q("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string label = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    q += static_cast<char>(label.size());
    q += label;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  q += std::string("\0\0\1\0\1", 5);
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(53);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  char buf[512];
  const auto t0 = Clock::now();
  ::send(fd, q.data(), q.size(), 0);
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  ::close(fd);
  if (n < 12 || (buf[3] & 0x0f) != 0) {
    std::fprintf(stderr, "no answer for %s\n", name.c_str());
    std::exit(1);
  }
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  std::string label = "path", host = "127.0.0.1", dns_name;
  int port = 0;
  bool through_proxy = false, serve_mode = false;
  int burst_n = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--serve") serve_mode = true;
    if (k == "--connect") through_proxy = true;
    if (i + 1 >= argc) continue;
    if (k == "--label") label = argv[i + 1];
    if (k == "--host") host = argv[i + 1];
    if (k == "--port") port = std::atoi(argv[i + 1]);
    if (k == "--dns") dns_name = argv[i + 1];
    if (k == "--burst") burst_n = std::atoi(argv[i + 1]);
  }
  if (serve_mode) return serve_forever();

  if (!dns_name.empty()) {
    // Warm: a name that has its addresses already. New: a name never asked,
    // whose listeners are made inside the run before the answer leaves.
    std::vector<double> warm, fresh;
    dns_query(dns_name);
    for (int i = 0; i < 1000; ++i) warm.push_back(dns_query(dns_name));
    for (int i = 0; i < 200; ++i) fresh.push_back(dns_query("n" + std::to_string(i) + "." + dns_name));
    std::printf("%s (warm)\t%.0f\t%.0f\t-\n", label.c_str(), percentile(warm, 0.5), percentile(warm, 0.99));
    std::printf("%s (new name)\t%.0f\t%.0f\t-\n", label.c_str(), percentile(fresh, 0.5),
                percentile(fresh, 0.99));
    return 0;
  }

  Path path;
  if (through_proxy) {
    // http://px:PASSWORD@127.0.0.1:PORT from the run's environment.
    const char* proxy = std::getenv("HTTPS_PROXY");
    if (!proxy) {
      std::fprintf(stderr, "no HTTPS_PROXY\n");
      return 1;
    }
    const std::string url = proxy;
    const std::size_t at = url.rfind('@');
    const std::string auth = url.substr(url.find("//") + 2, at - url.find("//") - 2);
    const int proxy_port = std::atoi(url.substr(url.rfind(':') + 1).c_str());
    path.target = resolve("127.0.0.1", proxy_port);
    const std::string authority = host + ":" + std::to_string(port);
    path.connect_line = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority +
                        "\r\nProxy-Authorization: Basic " + b64(auth) + "\r\n\r\n";
  } else {
    path.target = resolve(host, port);
  }

  if (burst_n > 0) {
    burst(path, burst_n, label);
    return 0;
  }

  // Set-up: connect (+ CONNECT and its 200) + one round trip, 1000 times.
  std::vector<double> setup;
  for (int i = 0; i < 1000; ++i) {
    const auto t0 = Clock::now();
    const int fd = open_path(path);
    write_all(fd, "PING\n");
    read_until(fd, "PONG\n");
    setup.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    ::close(fd);
  }
  // Throughput: best of three 1 GiB transfers through one connection.
  const std::size_t bytes = std::size_t{1} << 30;
  double best = 0;
  std::vector<char> buf(256 * 1024);
  for (int round = 0; round < 3; ++round) {
    const int fd = open_path(path);
    const auto t0 = Clock::now();
    write_all(fd, "SEND " + std::to_string(bytes) + "\n");
    std::size_t got = 0;
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0) got += static_cast<std::size_t>(n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    ::close(fd);
    if (got == bytes) best = std::max(best, static_cast<double>(bytes) / s / 1e6);
  }
  std::printf("%s\t%.0f\t%.0f\t%.0f\n", label.c_str(), percentile(setup, 0.5), percentile(setup, 0.99), best);
  return 0;
}
