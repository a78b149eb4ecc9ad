#include "ui/assets.hpp"

namespace px::ui {

const Asset* find_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const auto& a : embedded_assets())
    if (a.path == path) return &a;
  return nullptr;
}

std::string_view asset_type(std::string_view path) {
  const auto ends = [&](std::string_view s) {
    return path.size() >= s.size() && path.substr(path.size() - s.size()) == s;
  };
  if (path == "/" || ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace px::ui
