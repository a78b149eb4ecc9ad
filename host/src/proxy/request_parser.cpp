#include "proxy/request_parser.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <array>

#include "common/ascii.hpp"
#include "common/base64.hpp"
#include "common/sha256.hpp"
#include "proxy/reasons.hpp"

namespace px::proxy {
namespace {

constexpr ParseResult bad(int status, std::string_view r) {
  return {ParseState::bad, status, r};
}

bool is_tchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

// Field values: HTAB, SP, visible ASCII and obs-text. No NUL, CR, LF or DEL.
bool is_value_char(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

ParseResult parse_request_line(std::string_view line, Request& out) {
  const std::size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return bad(400, reason::bad_request_line);
  const std::size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return bad(400, reason::bad_version);  // HTTP/0.9 has no version
  if (line.find(' ', sp2 + 1) != std::string_view::npos) return bad(400, reason::bad_request_line);
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  // Methods are case-sensitive; "connect" is not CONNECT, and no client sends it.
  if (method.empty() || method.size() > 32 ||
      !std::all_of(method.begin(), method.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return bad(400, reason::bad_method);
  }
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
      })) {
    return bad(400, reason::bad_target);
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return bad(400, reason::bad_version);
  out.method = method;
  out.target = target;
  out.version = version;
  return {ParseState::good, 0, {}};
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return ascii_iequals(a, b);
}

std::size_t Request::count(std::string_view name) const {
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const Header& h) { return iequals(h.name, name); }));
}

const Header* Request::find(std::string_view name) const {
  for (const auto& h : headers) {
    if (iequals(h.name, name)) return &h;
  }
  return nullptr;
}

ParseResult parse_request_head(std::string_view buffer, const HeadLimits& limits, Request& out) {
  out = {};
  // Request line. Bytes are checked as they arrive, so a TLS ClientHello or a
  // binary blob sent to the proxy is refused at once instead of at the timeout.
  std::size_t nl = buffer.find('\n');
  const std::string_view first = buffer.substr(0, nl);
  for (std::size_t i = 0; i < first.size(); ++i) {
    const auto c = static_cast<unsigned char>(first[i]);
    if (c == '\r') {
      if (i + 1 != first.size()) return bad(400, reason::bad_request_line);  // bare CR
    } else if (c < 0x20 || c == 0x7f) {
      return bad(400, reason::bad_request_line);  // NUL, tab separators, other controls
    }
  }
  if (nl == std::string_view::npos) {
    if (buffer.size() > limits.max_request_line) return bad(414, reason::request_line_too_long);
    return {};
  }
  if (nl == 0 || buffer[nl - 1] != '\r') return bad(400, reason::bare_line_feed);
  if (nl - 1 > limits.max_request_line) return bad(414, reason::request_line_too_long);
  ParseResult r = parse_request_line(buffer.substr(0, nl - 1), out);
  if (r.state == ParseState::bad) return r;

  std::size_t end = 0;
  r = parse_header_fields(buffer, nl + 1, limits, out.headers, end);
  if (r.state != ParseState::good) return r;
  out.head_size = end;
  return r;
}

ParseResult parse_header_fields(std::string_view buffer, std::size_t headers_start, const HeadLimits& limits,
                                std::vector<Header>& out, std::size_t& head_end) {
  std::size_t pos = headers_start;
  while (true) {
    if (pos - headers_start > limits.max_header_bytes) return bad(431, reason::headers_too_large);
    const std::size_t nl = buffer.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (buffer.size() - headers_start > limits.max_header_bytes) return bad(431, reason::headers_too_large);
      const std::string_view partial = buffer.substr(pos);
      if (partial.find('\0') != std::string_view::npos) return bad(400, reason::bad_header);
      return {};
    }
    if (nl == pos || buffer[nl - 1] != '\r') return bad(400, reason::bare_line_feed);
    const std::string_view line = buffer.substr(pos, nl - 1 - pos);
    pos = nl + 1;
    if (line.empty()) break;  // end of head
    if (pos - headers_start > limits.max_header_bytes) return bad(431, reason::headers_too_large);
    if (line.front() == ' ' || line.front() == '\t') return bad(400, reason::obs_fold);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad(400, reason::bad_header);
    const std::string_view name = line.substr(0, colon);
    // Includes "Host : x": whitespace is not a token character.
    if (!std::all_of(name.begin(), name.end(),
                     [](char c) { return is_tchar(static_cast<unsigned char>(c)); })) {
      return bad(400, reason::bad_header);
    }
    const std::string_view value = line.substr(colon + 1);
    if (!std::all_of(value.begin(), value.end(),
                     [](char c) { return is_value_char(static_cast<unsigned char>(c)); })) {
      return bad(400, reason::bad_header);
    }
    if (out.size() >= limits.max_header_fields) return bad(431, reason::too_many_headers);
    out.push_back({std::string(name), std::string(trim(value))});
  }
  head_end = pos;
  return {ParseState::good, 0, {}};
}

namespace {

constexpr Verdict refuse(std::string_view r) {
  return {400, r};
}

bool split_list_has_only(std::string_view value, std::string_view token) {
  return iequals(trim(value), token);
}

}  // namespace

Verdict check_body_framing(const Request& request, Target& out) {
  const std::size_t n_te = request.count("transfer-encoding");
  const std::size_t n_cl = request.count("content-length");
  if (n_te > 0 && n_cl > 0) return refuse(reason::body_framing);
  if (n_te > 1 || n_cl > 1) return refuse(reason::body_framing);
  if (n_te == 1) {
    // Only exactly "chunked": lists such as "chunked, identity" are read
    // differently by different servers.
    if (!split_list_has_only(request.find("transfer-encoding")->value, "chunked")) {
      return refuse(reason::body_framing);
    }
    if (request.version == "HTTP/1.0") return refuse(reason::body_framing);
    out.body = Target::Body::chunked;
  } else if (n_cl == 1) {
    const std::string& v = request.find("content-length")->value;
    if (v.empty() || v.size() > 15 ||
        !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return refuse(reason::body_framing);
    }
    out.content_length = std::stoull(v);
    out.body = out.content_length > 0 ? Target::Body::length : Target::Body::none;
  }
  return {};
}

namespace {

// 127.0.0.1 and [::1] are refused as IP literals, but read whole: they are
// this machine, which Local servers may reach (the caller decides).
bool loopback_literal(const Verdict& v, const HostPort& endpoint) {
  return v.reason == reason::ip_literal && is_loopback_name(endpoint.host);
}

}  // namespace

Verdict interpret(const Request& request, Target& out) {
  out = {};
  if (request.count("host") > 1) return refuse(reason::duplicate_header);
  if (request.count("proxy-authorization") > 1) return refuse(reason::duplicate_header);
  const Header* host_header = request.find("host");

  if (request.method == "CONNECT") {
    out.is_connect = true;
    const Verdict v = parse_authority(request.target, /*port_required=*/true, 0, out.endpoint);
    const bool loopback = loopback_literal(v, out.endpoint);
    if (!v.ok() && !loopback) return v;
    // The decision is taken on the authority alone; a Host header that says
    // something else is a confused or hostile client.
    if (host_header != nullptr) {
      HostPort h;
      const Verdict hv = parse_authority(host_header->value, false, out.endpoint.port, h);
      if (!(hv.ok() || loopback_literal(hv, h)) || h.host != out.endpoint.host ||
          h.port != out.endpoint.port) {
        return refuse(reason::host_mismatch);
      }
    }
    if (request.count("transfer-encoding") > 0) return refuse(reason::body_framing);
    if (const Header* cl = request.find("content-length"); cl != nullptr && cl->value != "0") {
      return refuse(reason::body_framing);
    }
    return v;
  }

  const std::string_view target = request.target;
  if (target.front() == '/' || target == "*") return refuse(reason::origin_form);
  const std::size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return refuse(reason::bad_target);
  if (!iequals(target.substr(0, scheme_end), "http")) return refuse(reason::unsupported_scheme);
  const std::string_view rest = target.substr(scheme_end + 3);
  // A fragment is never sent by a client, and '\' is read as '/' by browsers:
  // both are classic ways to make two parsers see two different hosts.
  if (rest.find('#') != std::string_view::npos || rest.find('\\') != std::string_view::npos) {
    return refuse(reason::bad_target);
  }
  const std::size_t path_start = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, path_start);
  const Verdict v = parse_authority(authority, /*port_required=*/false, 80, out.endpoint);
  const bool loopback = loopback_literal(v, out.endpoint);
  if (!v.ok() && !loopback) return v;
  if (path_start == std::string_view::npos) {
    out.path = "/";
  } else if (rest[path_start] == '?') {
    out.path = "/";
    out.path.append(rest.substr(path_start));
  } else {
    out.path = std::string(rest.substr(path_start));
  }
  // RFC 9112 3.2.2: with absolute-form the Host header is ignored and replaced.
  const Verdict framing = check_body_framing(request, out);
  return framing.ok() ? v : framing;
}

AuthResult check_proxy_auth(const Request& request, std::string_view password) {
  const Header* h = request.find("proxy-authorization");
  if (h == nullptr) return AuthResult::missing;
  const std::string_view value = h->value;
  if (value.size() < 6 || !iequals(value.substr(0, 6), "basic ")) return AuthResult::wrong;
  const std::string_view encoded = trim(value.substr(6));
  if (encoded.empty() || encoded.size() % 4 != 0 || encoded.size() > 1024) return AuthResult::wrong;
  auto decoded = base64_decode(encoded);
  if (!decoded) return AuthResult::wrong;
  const std::string_view credentials = *decoded;
  const std::size_t colon = credentials.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    OPENSSL_cleanse(decoded->data(), decoded->size());
    return AuthResult::wrong;
  }
  // Comparing digests makes the time independent of the length of the guess
  // as well as of its content; CRYPTO_memcmp touches every byte.
  const auto given = sha256(credentials.substr(colon + 1));
  const auto expected = sha256(password);
  const bool equal = CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
  OPENSSL_cleanse(decoded->data(), decoded->size());
  return equal && !password.empty() ? AuthResult::ok : AuthResult::wrong;
}

std::string upstream_head(const Request& request, const Target& target) {
  // Hop-by-hop headers (RFC 9110 7.6.1) and every header the client named in
  // Connection stay here. Upgrade goes too: one request per connection, no h2c
  // or WebSocket switch behind the proxy's back.
  std::vector<std::string> drop = {"connection", "keep-alive",     "te",  "trailer",
                                   "upgrade",    "http2-settings", "host"};
  for (const auto& h : request.headers) {
    if (!iequals(h.name, "connection")) continue;
    std::string_view list = h.value;
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      std::string token = ascii_lower(trim(list.substr(0, comma)));
      if (!token.empty()) drop.push_back(std::move(token));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  std::string out;
  out.reserve(request.head_size + 64);
  out += request.method;
  out += ' ';
  out += target.path;
  out += ' ';
  out += request.version;
  out += "\r\nHost: ";
  out += target.endpoint.host;
  if (target.endpoint.port != 80) out += ":" + std::to_string(target.endpoint.port);
  out += "\r\n";
  for (const auto& h : request.headers) {
    if (h.name.size() >= 6 && iequals(std::string_view(h.name).substr(0, 6), "proxy-")) continue;
    const bool dropped =
        std::any_of(drop.begin(), drop.end(), [&](const std::string& d) { return iequals(h.name, d); });
    if (dropped) continue;
    out += h.name;
    out += ": ";
    out += h.value;
    out += "\r\n";
  }
  out += "Connection: close\r\n\r\n";
  return out;
}

ChunkedTracker::Step ChunkedTracker::feed(std::string_view data, std::vector<std::string_view>* data_spans) {
  Step step;
  std::size_t i = 0;
  const auto fail = [&] {
    step.error = true;
    step.consumed = i;
    return step;
  };
  while (i < data.size() && state_ != S::done) {
    const char c = data[i];
    switch (state_) {
      case S::size: {
        int digit = -1;
        if (c >= '0' && c <= '9')
          digit = c - '0';
        else if (c >= 'a' && c <= 'f')
          digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
          digit = c - 'A' + 10;
        if (digit >= 0) {
          // 15 hex digits is 1 PiB: more is an overflow attempt.
          if (++size_digits_ > 15) return fail();
          remaining_ = remaining_ * 16 + static_cast<std::uint64_t>(digit);
        } else if (size_digits_ > 0 && c == ';') {
          state_ = S::size_ext;
        } else if (size_digits_ > 0 && c == '\r') {
          state_ = S::size_lf;
        } else {
          return fail();
        }
        ++i;
        break;
      }
      case S::size_ext:
        if (c == '\r')
          state_ = S::size_lf;
        else if (!is_value_char(static_cast<unsigned char>(c)))
          return fail();
        ++i;
        break;
      case S::size_lf:
        if (c != '\n') return fail();
        state_ = remaining_ == 0 ? S::trailer_start : S::data;
        ++i;
        break;
      case S::data: {
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size() - i));
        if (data_spans != nullptr && take > 0) data_spans->push_back(data.substr(i, take));
        i += take;
        remaining_ -= take;
        if (remaining_ == 0) state_ = S::data_cr;
        break;
      }
      case S::data_cr:
        if (c != '\r') return fail();
        state_ = S::data_lf;
        ++i;
        break;
      case S::data_lf:
        if (c != '\n') return fail();
        state_ = S::size;
        size_digits_ = 0;
        ++i;
        break;
      case S::trailer_start:
        if (c == '\r')
          state_ = S::final_lf;
        else if (c == '\n' || !is_value_char(static_cast<unsigned char>(c)))
          return fail();
        else
          state_ = S::trailer;
        ++i;
        break;
      case S::trailer:
        if (c == '\r')
          state_ = S::trailer_lf;
        else if (!is_value_char(static_cast<unsigned char>(c)))
          return fail();
        ++i;
        break;
      case S::trailer_lf:
        if (c != '\n') return fail();
        state_ = S::trailer_start;
        ++i;
        break;
      case S::final_lf:
        if (c != '\n') return fail();
        state_ = S::done;
        ++i;
        break;
      case S::done:
        break;
    }
  }
  step.consumed = i;
  step.done = state_ == S::done;
  return step;
}

}  // namespace px::proxy
