#include "ui/rules.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>
#include <cstdio>

#include "common/json_io.hpp"
#include "report/time_text.hpp"
#include "ui/assets.hpp"

namespace px::ui {
namespace {

UiReply json_reply(int status, const nlohmann::json& body) {
  UiReply r;
  r.status = status;
  r.content_type = "application/json";
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

UiReply error_reply(int status, const std::string& message) {
  return json_reply(status, {{"error", message}});
}

// `/` without the cookie: a page that says what to do (no script, no link out).
UiReply open_the_address_page() {
  UiReply r;
  r.status = 401;
  r.content_type = "text/html; charset=utf-8";
  r.body =
      "<!doctype html><meta charset=\"utf-8\"><title>Parallex</title>"
      "<p>Open the address <code>parallex ui</code> printed (it carries this launch's key), "
      "or start <code>parallex ui</code> again.</p>\n";
  return r;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

bool same_secret(const std::string& given, const std::string& secret) {
  return given.size() == secret.size() && CRYPTO_memcmp(given.data(), secret.data(), secret.size()) == 0;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t i = 1;
  while (i <= path.size()) {
    const std::size_t j = path.find('/', i);
    parts.push_back(path.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return parts;
}

}  // namespace

ApiAnswer api_error(const Error& error) {
  int status = 400;
  switch (error.kind) {
    case ErrorKind::not_found:
      status = 404;
      break;
    case ErrorKind::conflict:
      status = 409;
      break;
    case ErrorKind::invalid_input:
    case ErrorKind::policy:
      status = 400;
      break;
    default:
      status = 500;
  }
  return {status, {{"error", error.message}}};
}

const std::vector<std::pair<std::string, std::string>>& security_headers() {
  static const std::vector<std::pair<std::string, std::string>> headers{
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-store"}};
  return headers;
}

std::string new_ui_secret() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) std::abort();
  std::string hex;
  char two[3];
  for (unsigned char b : bytes) {
    std::snprintf(two, sizeof two, "%02x", b);
    hex += two;
  }
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return hex;
}

std::optional<std::string> query_value(const std::string& query, const std::string& name) {
  std::size_t i = 0;
  while (i <= query.size()) {
    std::size_t j = query.find('&', i);
    if (j == std::string::npos) j = query.size();
    const std::string pair = query.substr(i, j - i);
    const std::size_t eq = pair.find('=');
    if (percent_decoded(pair.substr(0, eq)) == name)
      return eq == std::string::npos ? std::string() : percent_decoded(pair.substr(eq + 1));
    i = j + 1;
  }
  return std::nullopt;
}

UiRules::UiRules(std::uint16_t port, std::string secret, std::vector<ApiRoute> routes)
    : port_(port),
      secret_(std::move(secret)),
      origin_("http://127.0.0.1:" + std::to_string(port)),
      host_("127.0.0.1:" + std::to_string(port)),
      routes_(std::move(routes)) {}

bool UiRules::has_cookie(const std::string& header) const {
  std::size_t i = 0;
  while (i < header.size()) {
    std::size_t j = header.find(';', i);
    if (j == std::string::npos) j = header.size();
    std::string pair = header.substr(i, j - i);
    const auto first = pair.find_first_not_of(' ');
    pair = first == std::string::npos ? "" : pair.substr(first);
    const std::string prefix = std::string(kCookieName) + "=";
    if (pair.rfind(prefix, 0) == 0 && same_secret(pair.substr(prefix.size()), secret_)) return true;
    i = j + 1;
  }
  return false;
}

UiReply UiRules::handle(const UiRequest& req) const {
  // DNS rebinding: a page of another name that resolves here carries its own Host.
  if (req.host != host_) return error_reply(403, "this server answers to " + host_ + " only");
  const bool changes = req.method != "GET" && req.method != "HEAD";
  if (req.method != "GET" && req.method != "POST") return error_reply(405, "only GET and POST are served");
  // A form or script of another origin: the browser says where it comes from.
  if (changes && req.origin != origin_)
    return error_reply(403, "a request that changes anything must come from " + origin_);
  const std::size_t q = req.target.find('?');
  const std::string path = req.target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : req.target.substr(q + 1);
  if (path == "/" && req.method == "GET") {
    if (const auto key = query_value(query, "key")) {
      if (!same_secret(*key, secret_)) return open_the_address_page();
      UiReply r;
      r.status = 303;
      r.headers = {
          {"Location", "/"},
          {"Set-Cookie", std::string(kCookieName) + "=" + secret_ + "; HttpOnly; SameSite=Strict; Path=/"}};
      return r;
    }
  }
  if (!has_cookie(req.cookie)) {
    if (path == "/") return open_the_address_page();
    return error_reply(401, "no key: open the address `parallex ui` printed");
  }
  if (changes && !req.body.empty() && req.content_type.rfind("application/json", 0) != 0)
    return error_reply(415, "a request body must be JSON (Content-Type: application/json)");
  if (path.rfind("/api/", 0) == 0) return route_api(req, path, query);
  if (req.method == "GET")
    if (const Asset* a = find_asset(path)) {
      UiReply r;
      r.content_type = std::string(asset_type(a->path));
      r.body = std::string(a->bytes);
      return r;
    }
  return error_reply(404, "nothing is served at " + path);
}

UiReply UiRules::route_api(const UiRequest& req, const std::string& path, const std::string& query) const {
  if (path == "/api/events") {
    if (req.method != "GET") return error_reply(405, "/api/events is read with GET");
    UiReply r;
    r.stream_events = true;
    if (const auto since = query_value(query, "since"); since && !since->empty()) {
      auto ms = report::parse_since(*since, report::now_ms());
      if (!ms) return error_reply(400, ms.error().message);
      r.events_since_ms = ms.value();
    }
    return r;
  }
  const auto parts = split_path(path);
  bool path_known = false;
  for (const auto& route : routes_) {
    const auto want = split_path(route.pattern);
    if (want.size() != parts.size()) continue;
    ApiParams params;
    bool match = true;
    for (std::size_t i = 0; i < want.size() && match; ++i) {
      if (want[i].size() > 2 && want[i].front() == '{' && want[i].back() == '}')
        params[want[i].substr(1, want[i].size() - 2)] = percent_decoded(parts[i]);
      else
        match = want[i] == parts[i];
    }
    if (!match) continue;
    path_known = true;
    if (route.method != req.method) continue;
    nlohmann::json body = nlohmann::json::object();
    if (!req.body.empty()) {
      body = parse_json_input(req.body);  // from outside the process: its nesting is bounded first
      if (body.is_discarded() || !body.is_object())
        return error_reply(400, "the request body is not a JSON object");
    }
    ApiAnswer a;
    try {
      a = route.handle(params, body);
    } catch (const std::exception& e) {
      // A field of the wrong type (nlohmann's type_error), or worse: said, never a crash.
      return error_reply(400, std::string("bad request: ") + e.what());
    }
    return json_reply(a.status, a.body);
  }
  if (path_known) return error_reply(405, req.method + " is not served at " + path);
  return error_reply(404, "no API endpoint at " + path + " (docs/ui.md lists them)");
}

}  // namespace px::ui
