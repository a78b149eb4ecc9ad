/* Network ways out. Usage: net_probe tcp IP PORT | udp_dns IP | unix PATH |
 *   abstract NAME | bind PORT | resolve NAME | connect HOST PORT (resolve, then TCP) |
 *   serve PORT (a server on the run's own 127.0.0.1:PORT, and a client of it: a byte each way) */
#include "probe.h"
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int finish_connect(int s, const struct sockaddr* a, socklen_t len) {
  if (connect(s, a, len) == 0) return px_result("OPEN");
  if (errno != EINPROGRESS) return px_errno_result(-1);
  struct pollfd p = {s, POLLOUT, 0};
  int e = ETIMEDOUT;
  if (poll(&p, 1, 3000) > 0) {
    socklen_t l = sizeof e;
    getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l);
  }
  if (e == 0) return px_result("OPEN");
  errno = e;
  return px_errno_result(-1);
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* op = argv[1];
  if (!strcmp(op, "tcp") && argc > 3) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[3]))};
    inet_pton(AF_INET, argv[2], &a.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (s < 0) return px_errno_result(-1);
    return finish_connect(s, (struct sockaddr*)&a, sizeof a);
  }
  if (!strcmp(op, "bind")) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    return px_errno_result(bind(s, (struct sockaddr*)&a, sizeof a));
  }
  if (!strcmp(op, "serve")) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (struct sockaddr*)&a, sizeof a) != 0 || listen(l, 4) != 0) return px_errno_result(-1);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr*)&a, sizeof a) != 0) return px_errno_result(-1);
    int s = accept(l, NULL, NULL);
    char b = 0;
    if (s < 0 || write(c, "x", 1) != 1 || read(s, &b, 1) != 1 || write(s, "y", 1) != 1 || read(c, &b, 1) != 1 ||
        b != 'y')
      return px_errno_result(-1);
    return px_result("OPEN");
  }
  if (!strcmp(op, "udp_dns")) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, argv[2], &a.sin_addr);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    static const unsigned char q[] = {0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm',
                                      'p',  'l',  'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
    if (sendto(s, q, sizeof q, 0, (struct sockaddr*)&a, sizeof a) < 0) return px_errno_result(-1);
    struct pollfd p = {s, POLLIN, 0};
    if (poll(&p, 1, 3000) <= 0) return px_result("ETIMEDOUT");
    return px_errno_result(recv(s, (char[512]){0}, 512, 0));
  }
  if (!strcmp(op, "connect") && argc > 3) {
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(argv[2], argv[3], &hints, &res) != 0 || !res) return px_result("EAI");
    int s = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (s < 0) return px_errno_result(-1);
    return finish_connect(s, res->ai_addr, res->ai_addrlen);
  }
  if (!strcmp(op, "resolve")) {
    struct addrinfo* res = NULL;
    int rc = getaddrinfo(argv[2], "443", NULL, &res);
    return px_result(rc == 0 ? "OPEN" : "EAI");
  }
  if (!strcmp(op, "unix") || !strcmp(op, "abstract")) {
    struct sockaddr_un u = {.sun_family = AF_UNIX};
    size_t off = !strcmp(op, "abstract") ? 1 : 0;
    size_t n = strlen(argv[2]);
    memcpy(u.sun_path + off, argv[2], n);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (s < 0) return px_errno_result(-1);
    return finish_connect(s, (struct sockaddr*)&u, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + off + n));
  }
  return 2;
}
