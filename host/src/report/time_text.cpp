#include "report/time_text.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/clock.hpp"

namespace px::report {

std::string format_iso_ms(std::int64_t ms) {
  return iso_utc_ms(ms);
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::int64_t> parse_since(const std::string& text, std::int64_t now) {
  if (auto t = parse_iso_ms(text)) return *t;
  std::size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (...) {
    n = -1;
  }
  if (n >= 0 && used + 1 == text.size()) {
    const std::int64_t unit = text.back() == 's'   ? 1000
                              : text.back() == 'm' ? 60'000
                              : text.back() == 'h' ? 3'600'000
                              : text.back() == 'd' ? 86'400'000
                              : text.back() == 'w' ? 7 * 86'400'000LL
                                                   : 0;
    if (unit) return now - n * unit;
  }
  return Error::invalid(
      "--since " + text +
      " is neither a time (2026-11-29, 2026-11-29T14:00, 2026-11-29T14:00:00Z; UTC unless a zone "
      "is given) nor an age (90s, 30m, 2h, 3d, 1w).");
}

std::string format_duration(std::int64_t ms) {
  char buf[64];
  if (ms < 0) return "?";
  if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lld min %02lld s", static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms / 1000 % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld h %02lld min", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>(ms / 60'000 % 60));
  }
  return buf;
}

}  // namespace px::report
