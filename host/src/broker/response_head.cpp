#include "broker/response_head.hpp"

#include <algorithm>

namespace px::broker {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

proxy::ParseResult bad(std::string_view reason) {
  return {proxy::ParseState::bad, 502, reason};
}

}  // namespace

std::size_t Response::count(std::string_view name) const {
  return static_cast<std::size_t>(std::count_if(
      headers.begin(), headers.end(), [&](const proxy::Header& h) { return proxy::iequals(h.name, name); }));
}

const proxy::Header* Response::find(std::string_view name) const {
  for (const auto& h : headers) {
    if (proxy::iequals(h.name, name)) return &h;
  }
  return nullptr;
}

proxy::ParseResult parse_response_head(std::string_view buffer, const proxy::HeadLimits& limits,
                                       Response& out) {
  out = {};
  const std::size_t nl = buffer.find('\n');
  if (nl == std::string_view::npos) {
    if (buffer.size() > limits.max_request_line) return bad("status-line-too-long");
    return {};
  }
  if (nl == 0 || buffer[nl - 1] != '\r') return bad("bare-line-feed");
  const std::string_view line = buffer.substr(0, nl - 1);
  // HTTP/1.1 SP 3DIGIT SP reason; some servers leave out the last space.
  if (line.size() < 12 || (line.substr(0, 9) != "HTTP/1.1 " && line.substr(0, 9) != "HTTP/1.0 ")) {
    return bad("bad-status-line");
  }
  const std::string_view code = line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) || code[0] == '0') {
    return bad("bad-status-line");
  }
  if (line.size() > 12 && line[12] != ' ') return bad("bad-status-line");
  const std::string_view phrase = line.size() > 13 ? line.substr(13) : std::string_view();
  for (const char c : phrase) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return bad("bad-status-line");
  }
  out.version = std::string(line.substr(0, 8));
  out.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  out.reason_phrase = std::string(phrase);
  std::size_t end = 0;
  const auto r = proxy::parse_header_fields(buffer, nl + 1, limits, out.headers, end);
  if (r.state == proxy::ParseState::bad) return bad(r.reason);
  if (r.state == proxy::ParseState::need_more) return r;
  out.head_size = end;
  return r;
}

bool header_lists(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    if (proxy::iequals(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

ResponseFraming response_framing(const Response& response, std::string_view request_method) {
  ResponseFraming f;
  const int s = response.status;
  if (request_method == "HEAD" || (s >= 100 && s < 200) || s == 204 || s == 304) return f;
  const std::size_t n_te = response.count("transfer-encoding");
  const std::size_t n_cl = response.count("content-length");
  if (n_te > 0) {
    // RFC 9112 6.3: Transfer-Encoding overrides Content-Length; chunked last
    // means chunked, anything else reads to the end of the connection. The
    // relay drops Content-Length when it forwards such a head.
    std::string_view last;
    for (const auto& h : response.headers) {
      if (!proxy::iequals(h.name, "transfer-encoding")) continue;
      std::string_view v = h.value;
      const std::size_t comma = v.rfind(',');
      last = trim(comma == std::string_view::npos ? v : v.substr(comma + 1));
    }
    f.kind = proxy::iequals(last, "chunked") ? BodyKind::chunked : BodyKind::until_close;
    return f;
  }
  if (n_cl > 0) {
    // Several Content-Length fields are accepted only if they agree.
    std::string first;
    for (const auto& h : response.headers) {
      if (!proxy::iequals(h.name, "content-length")) continue;
      const std::string& v = h.value;
      if (v.empty() || v.size() > 15 ||
          !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        f.ok = false;
        return f;
      }
      if (!first.empty() && v != first) {
        f.ok = false;
        return f;
      }
      first = v;
    }
    f.length = std::stoull(first);
    f.kind = f.length > 0 ? BodyKind::length : BodyKind::none;
    return f;
  }
  f.kind = BodyKind::until_close;
  return f;
}

}  // namespace px::broker
