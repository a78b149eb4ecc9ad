#include "common/shown.hpp"

#include <cstdio>

namespace px {
namespace {

// The length of the UTF-8 sequence at `i`, 0 when it is not one (overlong,
// a surrogate, past U+10FFFF, cut short), or a C1 control (U+0080-U+009F,
// which terminals act on like ESC).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const auto cont = [&](std::size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) && !(c == 0xC2 && b(i + 1) <= 0x9F) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

std::string escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += keep_lines ? "\n" : "\\n";
      ++i;
    } else if (c == '\t') {
      out += "\\t";
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string shown(std::string_view text) {
  return escape(text, false);
}

std::string shown_lines(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return escape(text, true);
  return escape(text.substr(0, max_bytes), true) + "... (" + std::to_string(text.size() - max_bytes) +
         " more bytes left out)";
}

Status refuse_nul(std::string_view value, std::string_view what) {
  if (value.find('\0') == std::string_view::npos) return ok();
  constexpr std::size_t kShownAtMost = 200;
  const std::string_view head = value.substr(0, kShownAtMost);
  return Error::invalid(std::string(what) + ": the value \"" + shown(head) +
                        (value.size() > kShownAtMost ? "..." : "") +
                        "\" holds a NUL byte (\\x00), which would cut it short where it is used; remove it");
}

}  // namespace px
