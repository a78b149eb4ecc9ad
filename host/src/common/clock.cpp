#include "common/clock.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace px {

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

std::string iso_utc_ms(std::int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

std::string iso_utc_now() {
  return iso_utc_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
}

std::string iso_utc_seconds(std::time_t seconds) {
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace px
