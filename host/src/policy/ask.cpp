#include "policy/ask.hpp"

#include <charconv>
#include <string>

namespace px::policy {

Result<std::chrono::seconds> parse_ask(std::string_view text, const std::string& where) {
  if (text.empty() || text == "on" || text == "true") return kDefaultAskTimeout;
  if (text == "off" || text == "false" || text == "0") return std::chrono::seconds(0);
  long long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.front() == '0' || n < 1 ||
      n > kMaxAskTimeout.count()) {
    return Error::invalid(where + ": '" + std::string(text) +
                          "' is not how long to wait for an answer; give whole seconds from 1 to " +
                          std::to_string(kMaxAskTimeout.count()) + ", on (" +
                          std::to_string(kDefaultAskTimeout.count()) + " s) or off");
  }
  return std::chrono::seconds(n);
}

}  // namespace px::policy
