#include "proxy/tls_sni.hpp"

#include <cstddef>
#include <cstdint>

#include "common/ascii.hpp"

namespace px::proxy {

namespace {

using Status = ClientHelloSni::Status;

constexpr unsigned char kHandshake = 0x16;
constexpr unsigned char kClientHello = 0x01;
constexpr std::size_t kRecordHeader = 5;
constexpr std::size_t kMaxRecord = 16384 + 2048;  // TLSPlaintext limit, with room for TLS 1.2 expansion

// A bounds-checked reader over the ClientHello's body.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool skip(std::size_t n) {
    if (b_.size() - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  bool u8(std::size_t& v) {
    if (pos_ + 1 > b_.size()) return false;
    v = static_cast<unsigned char>(b_[pos_]);
    pos_ += 1;
    return true;
  }
  bool u16(std::size_t& v) {
    if (pos_ + 2 > b_.size()) return false;
    v = (static_cast<std::size_t>(static_cast<unsigned char>(b_[pos_])) << 8) |
        static_cast<unsigned char>(b_[pos_ + 1]);
    pos_ += 2;
    return true;
  }
  bool take(std::size_t n, std::string_view& out) {
    if (b_.size() - pos_ < n) return false;
    out = b_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::string_view b_;
  std::size_t pos_ = 0;
};

ClientHelloSni result(Status s, std::string host = {}) {
  ClientHelloSni r;
  r.status = s;
  r.host = std::move(host);
  return r;
}

// The server_name extension: a list of (type, name); type 0 is a host name.
ClientHelloSni read_server_name(std::string_view ext) {
  Reader r(ext);
  std::size_t list = 0;
  std::string_view entries;
  if (!r.u16(list) || !r.take(list, entries) || !r.done()) return result(Status::malformed);
  Reader e(entries);
  while (!e.done()) {
    std::size_t type = 0, len = 0;
    std::string_view name;
    if (!e.u8(type) || !e.u16(len) || !e.take(len, name)) return result(Status::malformed);
    if (type != 0) continue;
    if (name.empty()) return result(Status::malformed);
    for (char c : name)
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
        return result(Status::malformed);
    return result(Status::found, std::string(name));
  }
  return result(Status::no_sni);
}

ClientHelloSni read_hello(std::string_view hello) {
  Reader r(hello);
  std::size_t len = 0;
  std::string_view part;
  // legacy_version, random, session id, cipher suites, compression methods.
  if (!r.skip(2 + 32) || !r.u8(len) || !r.skip(len) || !r.u16(len) || !r.skip(len) || !r.u8(len) ||
      !r.skip(len))
    return result(Status::malformed);
  if (r.done()) return result(Status::no_sni);  // no extensions at all
  std::string_view extensions;
  if (!r.u16(len) || !r.take(len, extensions) || !r.done()) return result(Status::malformed);
  Reader e(extensions);
  while (!e.done()) {
    std::size_t type = 0, size = 0;
    if (!e.u16(type) || !e.u16(size) || !e.take(size, part)) return result(Status::malformed);
    if (type == 0) return read_server_name(part);
  }
  return result(Status::no_sni);
}

}  // namespace

ClientHelloSni read_client_hello_sni(std::string_view bytes) {
  if (bytes.empty()) return result(Status::need_more);
  if (static_cast<unsigned char>(bytes[0]) != kHandshake) return result(Status::not_tls);
  // The handshake message, gathered from consecutive handshake records.
  std::string message;
  std::size_t pos = 0;
  std::size_t needed = 0;  // 4 + the ClientHello's length, once known
  while (true) {
    if (bytes.size() - pos < kRecordHeader) return result(Status::need_more);
    const auto type = static_cast<unsigned char>(bytes[pos]);
    const auto major = static_cast<unsigned char>(bytes[pos + 1]);
    const std::size_t len = (static_cast<std::size_t>(static_cast<unsigned char>(bytes[pos + 3])) << 8) |
                            static_cast<unsigned char>(bytes[pos + 4]);
    if (type != kHandshake || major != 3 || len == 0 || len > kMaxRecord) return result(Status::malformed);
    if (bytes.size() - pos - kRecordHeader < len) return result(Status::need_more);
    message.append(bytes.substr(pos + kRecordHeader, len));
    pos += kRecordHeader + len;
    if (needed == 0 && message.size() >= 4) {
      if (static_cast<unsigned char>(message[0]) != kClientHello) return result(Status::malformed);
      needed = 4 + ((static_cast<std::size_t>(static_cast<unsigned char>(message[1])) << 16) |
                    (static_cast<std::size_t>(static_cast<unsigned char>(message[2])) << 8) |
                    static_cast<unsigned char>(message[3]));
      if (needed > 4 * kMaxRecord) return result(Status::malformed);
    }
    if (needed != 0 && message.size() >= needed) break;
  }
  return read_hello(std::string_view(message).substr(4, needed - 4));
}

bool sni_matches(std::string_view sni, std::string_view connect_host) {
  auto trim = [](std::string_view s) {
    return !s.empty() && s.back() == '.' ? s.substr(0, s.size() - 1) : s;
  };
  sni = trim(sni);
  connect_host = trim(connect_host);
  return ascii_iequals(sni, connect_host);
}

}  // namespace px::proxy
