// Measures one proxy (or none): bulk throughput through one tunnel, tunnel
// set-up latency, and memory per idle tunnel. Built and driven by run.sh.
//   proxy_bench --label NAME [--proxy PORT --auth USER:PASS --pid PID]
// Prints one tab-separated line: label, MB/s, p50 us, p99 us, KiB per idle tunnel.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace {

using bench::b64;
using bench::read_until;
using bench::serve;
using bench::write_all;

using Clock = std::chrono::steady_clock;

int connect_port(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<uint16_t>(port));
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int start_upstream() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  ::listen(fd, 4096);
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  std::thread([fd] {
    while (true) {
      const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::thread(serve, c).detach();
    }
  }).detach();
  return ntohs(sin.sin_port);
}

struct Target {
  int proxy_port = 0;  // 0: direct
  std::string auth;
  int upstream = 0;
};

int open_tunnel(const Target& t) {
  if (t.proxy_port == 0) return connect_port(t.upstream);
  const int fd = connect_port(t.proxy_port);
  write_all(fd, "CONNECT localhost:" + std::to_string(t.upstream) + " HTTP/1.1\r\nHost: localhost:" +
                    std::to_string(t.upstream) + "\r\nProxy-Authorization: Basic " + b64(t.auth) + "\r\n\r\n");
  const std::string head = read_until(fd, "\r\n\r\n");
  if (head.find(" 200") == std::string::npos) {
    std::fprintf(stderr, "tunnel refused: %s\n", head.c_str());
    std::exit(1);
  }
  return fd;
}

// CPU seconds (user + system) the process has used so far.
double cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double self_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

long rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      long v = 0;
      in >> v;
      return v;
    }
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Target t;
  std::string label = "direct";
  int pid = 0;
  std::size_t bytes = std::size_t{1} << 30;
  int tunnels = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--proxy") t.proxy_port = std::atoi(argv[i + 1]);
    if (k == "--auth") t.auth = argv[i + 1];
    if (k == "--pid") pid = std::atoi(argv[i + 1]);
    if (k == "--label") label = argv[i + 1];
    if (k == "--bytes") bytes = std::stoull(argv[i + 1]);
    if (k == "--tunnels") tunnels = std::atoi(argv[i + 1]);
  }
  t.upstream = start_upstream();

  // Throughput: best of three 1 GiB transfers through one tunnel.
  double best = 0;
  const double cpu_before = pid > 0 ? cpu_seconds(pid) : 0;
  // This process is both ends (client and upstream): with the proxy's CPU it
  // gives what every byte costs the machine, hence the most its cores can carry.
  const double self_before = self_cpu_seconds();
  std::vector<char> buf(256 * 1024);
  for (int round = 0; round < 3; ++round) {
    const int fd = open_tunnel(t);
    const auto t0 = Clock::now();
    write_all(fd, "SEND " + std::to_string(bytes) + "\n");
    std::size_t got = 0;
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0) got += static_cast<std::size_t>(n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    ::close(fd);
    if (got != bytes) std::fprintf(stderr, "short transfer: %zu of %zu\n", got, bytes);
    best = std::max(best, static_cast<double>(got) / s / 1e6);
  }

  // The proxy's CPU per GiB relayed: what it costs, apart from the machine's load.
  const double gib_moved = 3.0 * static_cast<double>(bytes) / (1 << 30);
  const double cpu_per_gib = pid > 0 ? (cpu_seconds(pid) - cpu_before) / gib_moved : 0;
  const double ends_cpu_per_gib = (self_cpu_seconds() - self_before) / gib_moved;

  // Set-up latency: connect, tunnel, one round trip, close.
  std::vector<double> lat;
  for (int i = 0; i < 1000; ++i) {
    const auto t0 = Clock::now();
    const int fd = open_tunnel(t);
    write_all(fd, "PING\n");
    read_until(fd, "PONG\n");
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    ::close(fd);
  }
  std::sort(lat.begin(), lat.end());

  // Memory per idle tunnel: RSS of the proxy before and after opening them.
  double per_tunnel = 0;
  if (pid > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const long before = rss_kib(pid);
    std::vector<int> open;
    for (int i = 0; i < tunnels; ++i) {
      const int fd = open_tunnel(t);
      write_all(fd, "PING\n");
      read_until(fd, "PONG\n");
      open.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const long after = rss_kib(pid);
    per_tunnel = static_cast<double>(after - before) / tunnels;
    for (int fd : open) ::close(fd);
  }
  std::printf("%s\t%.0f\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\n", label.c_str(), best, lat[lat.size() / 2],
              lat[lat.size() * 99 / 100], per_tunnel, cpu_per_gib * 1000, ends_cpu_per_gib * 1000);
  return 0;
}
