#include "report/time_text.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/clock.hpp"

namespace px::report {

namespace {

bool digits(const std::string& s, std::size_t at, std::size_t n, int& out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_iso_ms(const std::string& s) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, ms = 0;
  if (!digits(s, 0, 4, year) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, month) || s[7] != '-' ||
      !digits(s, 8, 2, day))
    return std::nullopt;
  std::size_t at = 10;
  if (at < s.size() && (s[at] == 'T' || s[at] == ' ')) {
    if (!digits(s, at + 1, 2, hour) || s.size() < at + 6 || s[at + 3] != ':' || !digits(s, at + 4, 2, minute))
      return std::nullopt;
    at += 6;
    if (at < s.size() && s[at] == ':') {
      if (!digits(s, at + 1, 2, second)) return std::nullopt;
      at += 3;
      if (at < s.size() && (s[at] == '.' || s[at] == ',')) {
        ++at;
        int scale = 100;
        while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
          ms += (s[at] - '0') * scale;
          scale /= 10;
          ++at;
        }
      }
    }
  }
  std::int64_t offset_min = 0;
  if (at < s.size()) {
    if (s[at] == 'Z' || s[at] == 'z') {
      ++at;
    } else if (s[at] == '+' || s[at] == '-') {
      int oh = 0, om = 0;
      if (!digits(s, at + 1, 2, oh)) return std::nullopt;
      std::size_t m = at + 3;
      if (m < s.size() && s[m] == ':') ++m;
      if (!digits(s, m, 2, om)) return std::nullopt;
      offset_min = (s[at] == '-' ? -1 : 1) * (oh * 60 + om);
      at = m + 2;
    }
  }
  if (at != s.size()) return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = ::timegm(&tm);
  return static_cast<std::int64_t>(t) * 1000 + ms - offset_min * 60 * 1000;
}

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
