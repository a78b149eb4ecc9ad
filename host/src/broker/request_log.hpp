#pragma once
// One JSON line per request on a terminated host (and one per connection that
// ended before its first request: a refused CA, another SNI, a bad upstream
// certificate). Every string passes through the redactor, where every secret
// and placeholder is registered; the query of a path is never written.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/json_lines.hpp"

namespace px::broker {

struct RequestRecord {
  std::string host;
  std::uint16_t port = 0;
  std::string method;            // empty for a connection-level line
  std::string path;              // as the client sent it; the log cuts the query
  int status = 0;                // sent to the client (0: none, the connection failed)
  std::string_view verdict;      // allowed, denied, failed
  std::string_view reason;       // broker/reasons.hpp or proxy/reasons.hpp
  std::string rule;              // "github.com #2 allow POST /o/r.git/git-receive-pack", "no rules"
  std::string credentials;       // names swapped in, comma-separated
  std::string detail;            // e.g. the upstream's certificate error, where a placeholder was seen
  std::uint64_t bytes_up = 0;    // request body bytes sent upstream
  std::uint64_t bytes_down = 0;  // response body bytes sent to the client
  std::chrono::milliseconds duration{0};
};

// The path as logged: the query replaced by "?[query]", cut at 512 bytes.
std::string loggable_path(std::string_view target);

std::string to_json_line(const RequestRecord& r, std::chrono::system_clock::time_point when);

class RequestLog {
 public:
  RequestLog() = default;  // logs nowhere
  static Result<std::unique_ptr<RequestLog>> open(const std::filesystem::path& path);
  // Thread-safe: one write(2) per line on an O_APPEND descriptor.
  void write(const RequestRecord& r);

 private:
  JsonLinesWriter file_;
};

}  // namespace px::broker
