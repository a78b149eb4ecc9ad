#pragma once
// A request as Beast parsed it, as UiRules reads it: for the server and the
// fuzzer (fuzz/ui_request.cpp), so both read the same fields the same way.
#include <boost/beast/http.hpp>
#include <string>

#include "ui/rules.hpp"

namespace px::ui {

// How the server bounds what it reads of a request.
inline constexpr std::uint32_t kHeadLimit = 16 * 1024;
inline constexpr std::uint64_t kBodyLimit = 1024 * 1024;

inline UiRequest ui_request_from(const boost::beast::http::request<boost::beast::http::string_body>& req) {
  namespace http = boost::beast::http;
  UiRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  r.host = std::string(req[http::field::host]);
  if (req.find(http::field::origin) != req.end()) r.origin = std::string(req[http::field::origin]);
  // Every Cookie header, as one list: a browser may send more than one.
  for (auto it = req.find(http::field::cookie); it != req.end() && it->name() == http::field::cookie; ++it)
    r.cookie += (r.cookie.empty() ? "" : "; ") + std::string(it->value());
  r.content_type = std::string(req[http::field::content_type]);
  r.body = req.body();
  return r;
}

}  // namespace px::ui
