#pragma once
// What `parallex ui` answers to a request, before any byte of the network:
// the Host, Origin and cookie checks, the key-for-cookie exchange, the
// security headers, the static assets and the routing of /api/. A pure
// function of the request, so the server (ui/server.hpp) only moves bytes
// and the fuzzer (fuzz/ui_request.cpp) reaches every branch.
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace px::ui {

struct UiRequest {
  std::string method;  // "GET"
  std::string target;  // "/api/runs?x=1"
  std::string host;    // the Host header
  std::optional<std::string> origin;
  std::string cookie;        // the Cookie header(s), joined by "; "
  std::string content_type;  // the Content-Type header
  std::string body;
};

struct UiReply {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides the security headers
  // GET /api/events: the server streams events from `events_since_ms` on
  // (none: from now) instead of sending `body`.
  bool stream_events = false;
  std::optional<std::int64_t> events_since_ms;
};

// An API answer: a status and its JSON.
struct ApiAnswer {
  int status = 200;
  nlohmann::json body;
};
// {"error": message} with the status the error's kind says (400, 404, 409...).
ApiAnswer api_error(const Error& error);

using ApiParams = std::map<std::string, std::string>;
struct ApiRoute {
  std::string method;   // "GET" or "POST"
  std::string pattern;  // "/api/runs/{id}/pause": a {name} segment is a parameter
  std::function<ApiAnswer(const ApiParams& params, const nlohmann::json& body)> handle;
};

// The headers every answer carries (docs/ui.md).
const std::vector<std::pair<std::string, std::string>>& security_headers();

// The name of the cookie the key is exchanged for.
inline constexpr const char* kCookieName = "px_ui";

class UiRules {
 public:
  // `secret`: the per-launch key (64 hex digits).
  UiRules(std::uint16_t port, std::string secret, std::vector<ApiRoute> routes);
  UiReply handle(const UiRequest& request) const;
  std::uint16_t port() const { return port_; }

 private:
  bool has_cookie(const std::string& cookie_header) const;
  UiReply route_api(const UiRequest& request, const std::string& path, const std::string& query) const;
  std::uint16_t port_;
  std::string secret_;
  std::string origin_;  // "http://127.0.0.1:PORT"
  std::string host_;    // "127.0.0.1:PORT"
  std::vector<ApiRoute> routes_;
};

// A fresh per-launch key: 32 random bytes as hex.
std::string new_ui_secret();
// The value of `name` in a query string ("a=1&key=x"), percent-decoded, if present.
std::optional<std::string> query_value(const std::string& query, const std::string& name);

}  // namespace px::ui
