#include "common/json_dom.hpp"

#include <cstring>

#include "common/line_reader.hpp"

namespace parallex::transcripts::jsonl {
namespace {

static_assert(simdjson::SIMDJSON_PADDING <= LineReader::kPadding,
              "LineReader must leave simdjson its padding");

// Length of the valid UTF-8 sequence at p, or 0 when it is not one (overlong forms,
// surrogates and code points past U+10FFFF are not).
std::size_t utf8_len(const unsigned char* p, std::size_t n) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1Fu;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0Fu;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3Fu);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of "\uXXXX" at s[i], or -1.
long escape_at(const std::string& s, std::size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    const int d = hex_digit(s[k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Rewrites each \u escape of a surrogate that is not half of a pair as \uFFFD (same length),
// which simdjson would reject and which decodes to no character.
void replace_unpaired_surrogates(std::string& s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != '\\') continue;
    const long unit = escape_at(s, i);
    if (unit < 0xD800 || unit > 0xDFFF) {
      ++i;  // the escaped character (an escaped backslash is not the start of an escape)
      continue;
    }
    const long next = escape_at(s, i + 6);
    if (unit <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF) {
      i += 11;
      continue;
    }
    s.replace(i + 2, 4, "FFFD");
    i += 5;
  }
}

}  // namespace

// Capacity grows with the longest text seen, up to the longest line read. (Given to the
// constructor: simdjson 3.0.1's set_max_capacity sets 32 bytes for any larger value.)
Parser::Parser() : parser_(LineReader::kMaxLine) {
  // Out of memory here is out of memory at the first parse too, which reports it (MEMALLOC).
  if (parser_.allocate(std::size_t{64} << 10, kMaxDepth) != simdjson::SUCCESS) return;
}

Value Parser::parse(std::string_view text, bool padded) {
  if (!padded) {
    // Copied into a buffer this parser keeps (simdjson would allocate one for each text).
    copy_.assign(text);
    copy_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    text = copy_;
  }
  Value root = parser_.parse(text.data(), text.size(), false);
  const simdjson::error_code error = root.error();
  if (error != simdjson::UTF8_ERROR && error != simdjson::STRING_ERROR) return root;
  repaired_ = valid_utf8(text) ? std::string(text) : sanitize_utf8(text);
  replace_unpaired_surrogates(repaired_);
  repaired_.reserve(repaired_.size() + simdjson::SIMDJSON_PADDING);
  return parser_.parse(repaired_);
}

std::string str_prefix(const Value& v, std::size_t max) {
  std::string_view s = view(v);
  if (s.size() <= max) return std::string(s);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut));
}

std::optional<std::int64_t> integer(const Value& v) {
  std::int64_t i = 0;
  if (v.get(i) == simdjson::SUCCESS) return i;
  double d = 0;
  if (v.get(d) == simdjson::SUCCESS && d >= -9.2e18 && d <= 9.2e18) return static_cast<std::int64_t>(d);
  return std::nullopt;
}

std::string text(const Value& v) {
  if (v.error()) return {};
  if (v.is_string()) return str(v);
  return simdjson::to_string(v.value_unsafe());
}

nlohmann::json to_json(const Value& v) {
  if (v.error()) return nullptr;
  if (v.is_string()) return str(v);
  auto j = nlohmann::json::parse(simdjson::to_string(v.value_unsafe()), nullptr, false);
  if (j.is_discarded()) return nullptr;
  return j;
}

bool valid_utf8(std::string_view s) {
  return simdjson::validate_utf8(s.data(), s.size());
}

std::string sanitize_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  std::size_t i = 0;
  while (i < n) {
    const std::size_t l = utf8_len(p + i, n - i);
    if (l == 0) {
      out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(in.data() + i, l);
      i += l;
    }
  }
  return out;
}

}  // namespace parallex::transcripts::jsonl
