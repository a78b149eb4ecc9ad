#pragma once
// The head of an upstream response and how its body is framed (RFC 9112
// section 6.3). The header fields are read by the proxy's parser, with the
// same strictness as request heads.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/request_parser.hpp"

namespace px::broker {

struct Response {
  std::string version;  // HTTP/1.1 or HTTP/1.0
  int status = 0;
  std::string reason_phrase;
  std::vector<proxy::Header> headers;
  std::size_t head_size = 0;
  std::size_t count(std::string_view name) const;
  const proxy::Header* find(std::string_view name) const;
};

proxy::ParseResult parse_response_head(std::string_view buffer, const proxy::HeadLimits& limits,
                                       Response& out);

enum class BodyKind { none, length, chunked, until_close };

struct ResponseFraming {
  BodyKind kind = BodyKind::none;
  std::uint64_t length = 0;
  bool ok = true;  // false: framing two parsers could read differently (refused)
};

// `request_method` matters: a response to HEAD has no body whatever it says.
ResponseFraming response_framing(const Response& response, std::string_view request_method);

// True if `value` (a Connection header) lists `token`.
bool header_lists(std::string_view value, std::string_view token);

}  // namespace px::broker
