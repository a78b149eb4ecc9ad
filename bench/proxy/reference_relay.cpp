// The simplest CONNECT relay there is, as a reference for bench/proxy/run.sh:
// no rules, no auth, no logs, a thread per direction moving bytes with
// blocking splice(2). What it reaches on a machine is what any user-space
// relay can hope for there; on two cores the client, the relay and the server
// take turns on them. Prints "listening 127.0.0.1:PORT", then serves forever.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

void pump(int from, int to) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return;
  ::fcntl(pipe_fds[1], F_SETPIPE_SZ, 1 << 20);
  for (;;) {
    ssize_t n = ::splice(from, nullptr, pipe_fds[1], nullptr, 1 << 20, SPLICE_F_MOVE);
    if (n <= 0) break;
    while (n > 0) {
      const ssize_t m = ::splice(pipe_fds[0], nullptr, to, nullptr, static_cast<size_t>(n), SPLICE_F_MOVE);
      if (m <= 0) break;
      n -= m;
    }
    if (n > 0) break;
  }
  ::shutdown(to, SHUT_WR);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

void serve(int client) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && ::read(client, &c, 1) == 1) head += c;
  const auto colon = head.find(':');
  const int port = colon == std::string::npos ? 0 : std::atoi(head.c_str() + colon + 1);
  const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const int one = 1;
    ::setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (::write(client, ok, sizeof ok - 1) == static_cast<ssize_t>(sizeof ok - 1)) {
      std::thread down(pump, upstream, client);
      pump(client, upstream);
      down.join();
    }
  }
  ::close(upstream);
  ::close(client);
}

}  // namespace

int main() {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 4096) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("reference_relay: listen");
    return 1;
  }
  std::printf("listening 127.0.0.1:%d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  for (;;) {
    const int client = ::accept(listener, nullptr, nullptr);
    if (client >= 0) std::thread(serve, client).detach();
  }
}
