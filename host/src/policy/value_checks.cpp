#include "policy/value_checks.hpp"

#include <algorithm>

#include "common/shown.hpp"

namespace px::policy {

std::string check_text(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return u == 0 ? "holds a NUL byte"
                    : "holds a control character (" + shown(std::string_view(&c, 1)) + ")";
  }
  return {};
}

std::string check_path_text(std::string_view text) {
  if (text.empty()) return "is empty";
  if (auto problem = check_text(text); !problem.empty()) return problem;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('/', start), text.size());
    if (text.substr(start, end - start) == "..") return "climbs with '..'; write the path without it";
    start = end + 1;
  }
  return {};
}

std::string refused_from_plugin(std::string_view plugin, std::string_view callback, std::string_view what,
                                std::string_view value, std::string_view rule) {
  constexpr std::size_t kShownAtMost = 200;
  return "plugin " + std::string(plugin) + "'s " + std::string(callback) + " gave the " + std::string(what) +
         " \"" + shown(value.substr(0, kShownAtMost)) + (value.size() > kShownAtMost ? "..." : "") +
         "\", which " + std::string(rule) + "; the plugin needs fixing";
}

}  // namespace px::policy
