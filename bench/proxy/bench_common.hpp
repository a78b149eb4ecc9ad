#pragma once
// What the proxy benches share: the upstream's protocol ("SEND n" -> n bytes,
// "PING" -> "PONG", served per connection) and the client's small helpers.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace bench {

inline void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

inline std::string read_until(int fd, const std::string& needle) {
  std::string out;
  char c;
  while (out.find(needle) == std::string::npos && ::read(fd, &c, 1) == 1) out += c;
  return out;
}

// A proxy's answer head, read as a client reads it: what has arrived, in one
// call (peeked), then exactly the head, so the tunnel's bytes stay in the
// socket. Byte by byte, a 39-byte "200" alone would be 39 reads on the clock.
inline std::string read_head(int fd) {
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK);
    if (n <= 0) return out;
    const std::string seen = out + std::string(buf, static_cast<std::size_t>(n));
    const std::size_t end = seen.find("\r\n\r\n");
    // Not whole yet: everything peeked is head, taken; then wait for more.
    const std::size_t take = end == std::string::npos ? static_cast<std::size_t>(n) : end + 4 - out.size();
    const ssize_t got = ::read(fd, buf, take);
    if (got <= 0) return out;
    out.append(buf, static_cast<std::size_t>(got));
    if (end != std::string::npos && out.size() == end + 4) return out;
  }
}

// Upstream: "SEND n\n" -> n bytes then close; "PING\n" -> "PONG\n", repeatedly.
inline void serve(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1) {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line.rfind("SEND ", 0) == 0) {
      std::size_t left = std::stoull(line.substr(5));
      std::vector<char> buf(256 * 1024, 'x');
      while (left > 0) {
        const ssize_t n = ::write(fd, buf.data(), std::min(left, buf.size()));
        if (n <= 0) break;
        left -= static_cast<std::size_t>(n);
      }
      break;
    }
    write_all(fd, "PONG\n");
    line.clear();
  }
  ::close(fd);
}

inline std::string b64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? t[v & 63] : '=';
  }
  return out;
}

}  // namespace bench
