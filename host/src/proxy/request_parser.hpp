#pragma once
// The request-head parser: bytes in, good / bad / need-more out. Pure and
// strict (RFC 9112 without the leniencies): one space between the three parts
// of the request line, CRLF only, no obsolete line folding, no whitespace
// before a header's colon, no control bytes. Anything a downstream server could
// read differently from us is refused rather than repaired.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/host_rules.hpp"

namespace px::proxy {

struct HeadLimits {
  std::size_t max_request_line = 8 * 1024;
  std::size_t max_header_bytes = 16 * 1024;
  std::size_t max_header_fields = 100;
};

struct Header {
  std::string name;   // as received
  std::string value;  // without surrounding whitespace
};

struct Request {
  std::string method;
  std::string target;
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::vector<Header> headers;
  std::size_t head_size = 0;  // bytes of the head including the blank line

  // Case-insensitive lookups.
  std::size_t count(std::string_view name) const;
  const Header* find(std::string_view name) const;
};

enum class ParseState { need_more, good, bad };

struct ParseResult {
  ParseState state = ParseState::need_more;
  int status = 0;  // for bad: 400, 414 or 431
  std::string_view reason;
};

// Parses the head at the start of `buffer`. need_more means: no verdict yet and
// no limit exceeded; call again with more bytes.
ParseResult parse_request_head(std::string_view buffer, const HeadLimits& limits, Request& out);

// The header fields of a head (request or response) from `start` to the blank
// line, with the same rules and limits; on good, `head_end` is just past it.
ParseResult parse_header_fields(std::string_view buffer, std::size_t start, const HeadLimits& limits,
                                std::vector<Header>& out, std::size_t& head_end);

bool iequals(std::string_view a, std::string_view b);

// What a well-formed request asks the proxy to do.
struct Target {
  bool is_connect = false;
  HostPort endpoint;
  std::string path;  // origin-form for the upstream (plain HTTP only)
  enum class Body { none, length, chunked } body = Body::none;
  std::uint64_t content_length = 0;
};

// Content-Length or exactly "chunked", never both, never a list: sets
// out.body and out.content_length. Used by interpret() and by the broker for
// origin-form requests inside a terminated TLS connection.
Verdict check_body_framing(const Request& request, Target& out);

// Checks the request's meaning: CONNECT authority-form or absolute-form http://
// only, no userinfo, Host consistent, unambiguous body framing. A target of
// 127.0.0.1 or [::1] is read whole and answered with ip-literal-refused: the
// caller lets it through to this machine when Local servers is on.
Verdict interpret(const Request& request, Target& out);

enum class AuthResult { missing, wrong, ok };

// Proxy-Authorization: Basic base64(user:password), user not empty; the
// password is compared in constant time.
AuthResult check_proxy_auth(const Request& request, std::string_view password);

// The head sent upstream for plain HTTP: origin-form target, Host from the
// request target, hop-by-hop and Proxy-* headers removed, Connection: close.
std::string upstream_head(const Request& request, const Target& target);

// Follows a chunked body to its end without decoding it, so the proxy forwards
// exactly one body and nothing after it.
class ChunkedTracker {
 public:
  struct Step {
    std::size_t consumed = 0;  // bytes of the input that belong to the body
    bool done = false;
    bool error = false;
  };
  // With `data_spans`, also appends the parts of `data` that are chunk data
  // (the decoded body), for callers that look inside the body.
  Step feed(std::string_view data, std::vector<std::string_view>* data_spans = nullptr);

 private:
  enum class S {
    size,
    size_ext,
    size_lf,
    data,
    data_cr,
    data_lf,
    trailer_start,
    trailer,
    trailer_lf,
    final_lf,
    done
  };
  S state_ = S::size;
  std::uint64_t remaining_ = 0;
  int size_digits_ = 0;
};

}  // namespace px::proxy
