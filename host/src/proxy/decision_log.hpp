#pragma once
// One JSON line per decision. Only the io thread writes; each line is a single
// write(2) on an O_APPEND descriptor so that lines are never interleaved.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/json_lines.hpp"

namespace px::proxy {

struct Decision {
  std::string method;  // the request's; "TCP" for a captured connection, "DNS" for a query, "PUBLISH"
  std::string host;    // as requested (escaped by the JSON writer, cut at 256 bytes)
  std::uint16_t port = 0;
  std::string_view verdict;  // allowed, denied, paused, failed
  std::string_view reason;   // a constant from reasons.hpp
  int status = 0;            // HTTP status sent to the client (200 for an opened tunnel)
  std::string address;       // upstream address connected to, if any
  std::string_view closed;   // how an allowed connection ended: eof, idle-timeout, cut, stopped, error
  // Tunnels and captured connections: what the first bytes were checked as
  // ("tls-sni", "http-host"), or "none" (not TLS: relayed as raw TCP).
  std::string_view inspected;
  std::string dns_type;    // DNS: the question's type ("A", "AAAA", "TXT", ...)
  std::string_view rcode;  // DNS: the answer's code ("NOERROR", "NXDOMAIN", "REFUSED", ...)
  // Ask mode: the question this connection waited on and how it ended
  // (QuestionEnd::outcome); 0 and empty when it was not asked about.
  std::uint64_t question = 0;
  std::string answer;
  std::uint64_t bytes_up = 0;
  std::uint64_t bytes_down = 0;
  std::chrono::milliseconds duration{0};
};

std::string to_json_line(const Decision& d, std::chrono::system_clock::time_point when);

class DecisionLog {
 public:
  static Result<DecisionLog> open(const std::filesystem::path& path);
  DecisionLog() = default;  // logs nowhere
  void write(const Decision& d);

 private:
  JsonLinesWriter file_;
};

}  // namespace px::proxy
