#include "common/socket_request.hpp"

#include <charconv>

namespace px::netns {
namespace {

template <class T>
bool number(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Splits on single spaces; empty fields are kept (and then refused).
std::vector<std::string_view> fields(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t sp = text.find(' ', start);
    out.push_back(text.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) return out;
    start = sp + 1;
  }
}

}  // namespace

std::string encode(const SocketRequest& r) {
  std::string out(1, static_cast<char>(r.kind));
  out += std::to_string(r.id);
  for (const auto& e : r.endpoints) out += " " + e.address + " " + std::to_string(e.port);
  return out;
}

std::optional<SocketRequest> decode_request(std::string_view m) {
  if (m.empty() || (m[0] != 'L' && m[0] != 'C')) return std::nullopt;
  SocketRequest r;
  r.kind = static_cast<SocketRequest::Kind>(m[0]);
  const auto f = fields(m.substr(1));
  if (f.size() < 3 || f.size() % 2 != 1 || !number(f[0], r.id)) return std::nullopt;
  for (std::size_t i = 1; i + 1 < f.size(); i += 2) {
    Endpoint e;
    unsigned port = 0;
    if (f[i].empty() || f[i].size() > 45 || !number(f[i + 1], port) || port == 0 || port > 65535)
      return std::nullopt;
    e.address = std::string(f[i]);
    e.port = static_cast<std::uint16_t>(port);
    r.endpoints.push_back(std::move(e));
  }
  if (r.endpoints.size() > kMaxEndpoints) return std::nullopt;
  if (r.kind == SocketRequest::Kind::connect && r.endpoints.size() != 1) return std::nullopt;
  return r;
}

std::string encode_reply(const SocketReply& r) {
  std::string out(1, r.ok ? 'K' : 'F');
  out += std::to_string(r.id);
  if (!r.ok) out += " " + r.message;
  return out;
}

std::optional<SocketReply> decode_reply(std::string_view m) {
  if (m.empty() || (m[0] != 'K' && m[0] != 'F')) return std::nullopt;
  SocketReply r;
  r.ok = m[0] == 'K';
  const std::string_view rest = m.substr(1);
  const std::size_t sp = rest.find(' ');
  if (!number(rest.substr(0, sp), r.id)) return std::nullopt;
  if (sp != std::string_view::npos) r.message = std::string(rest.substr(sp + 1));
  return r;
}

}  // namespace px::netns
