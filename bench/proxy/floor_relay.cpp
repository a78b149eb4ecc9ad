// The least a CONNECT relay can do per connection, as a floor for the set-up
// row of bench/proxy/run.sh: one thread, one connection at a time (the bench's
// set-up loop opens them one after another), blocking calls, no rules, no
// auth, no log. Per connection it wakes for the request, and once per message
// after: what any relay that sleeps between messages pays on a machine.
// Prints "listening 127.0.0.1:PORT", then serves forever.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void serve(int client) {
  const int one = 1;
  ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string head;
  char buf[65536];
  std::size_t end = std::string::npos;
  while (end == std::string::npos) {
    const ssize_t n = ::read(client, buf, sizeof buf);
    if (n <= 0) return;
    head.append(buf, static_cast<std::size_t>(n));
    end = head.find("\r\n\r\n");
  }
  const auto colon = head.find(':', 8);
  const int port = colon == std::string::npos ? 0 : std::atoi(head.c_str() + colon + 1);
  const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (up < 0 || ::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (up >= 0) ::close(up);
    return;
  }
  ::setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
  if (!write_all(client, ok, sizeof ok - 1) || !write_all(up, head.data() + end + 4, head.size() - end - 4)) {
    ::close(up);
    return;
  }
  pollfd p[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};
  for (;;) {
    if (::poll(p, 2, -1) <= 0) break;
    const int from = p[0].revents ? client : up;
    const int to = from == client ? up : client;
    const ssize_t n = ::read(from, buf, sizeof buf);
    if (n <= 0 || !write_all(to, buf, static_cast<std::size_t>(n))) break;
  }
  ::close(up);
}

}  // namespace

int main() {
  const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (l < 0 || ::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 64) != 0 ||
      ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return 1;
  std::printf("listening 127.0.0.1:%u\n", ntohs(a.sin_port));
  std::fflush(stdout);
  for (;;) {
    const int c = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    serve(c);
    ::close(c);
  }
}
