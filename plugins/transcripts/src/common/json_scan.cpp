#include "common/json_scan.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace parallex::transcripts::scan {
namespace {

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

const char* skip_ws(const char* p, const char* e) {
  while (p < e && is_ws(*p)) ++p;
  return p;
}

// Bytes inside a string that need a closer look: quote, backslash, control characters.
constexpr std::array<bool, 256> make_string_stops() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}
constexpr auto kStringStops = make_string_stops();

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

constexpr int kMaxDepth = 512;
// The node table costs 48 bytes a value, and a line may be up to 1 GiB: a line of
// more values than this (a hostile `[0,0,0,...]`, never a real record, which has
// far fewer) is not one the parsers can use, and counts as malformed rather than
// taking gigabytes.
constexpr std::size_t kMaxNodes = std::size_t{1} << 20;

// Checks that a text is one JSON value and writes down where each of its
// values begins and ends (Document's nodes), in one pass.
class Validator {
 public:
  Validator(const char* b, const char* e, std::vector<Node>& nodes) : p_(b), e_(e), nodes_(nodes) {}

  // The root's node, or 0 when the text is not one JSON value.
  std::uint32_t run() {
    nodes_.clear();
    nodes_.emplace_back();  // nodes[0]: none, so that 0 ends a list
    p_ = skip_ws(p_, e_);
    const std::uint32_t root = add(nullptr, 0);
    if (!value(root, 0)) return 0;
    p_ = skip_ws(p_, e_);
    if (p_ != e_) return 0;
    return root;
  }

 private:
  // The new node's index, or 0 when the table is full.
  std::uint32_t add(const char* key, std::uint32_t key_size) {
    if (nodes_.size() >= kMaxNodes) return 0;
    const auto at = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_[at].key = key;
    nodes_[at].key_size = key_size;
    return at;
  }

  bool value(std::uint32_t at, int depth) {
    if (p_ >= e_) return false;
    const char* start = p_;
    Kind kind;
    switch (*p_) {
      case '{':
        kind = Kind::object;
        if (!object(at, depth)) return false;
        break;
      case '[':
        kind = Kind::array;
        if (!array(at, depth)) return false;
        break;
      case '"':
        kind = Kind::string;
        if (!string()) return false;
        break;
      case 't':
        kind = Kind::true_;
        if (!literal("true")) return false;
        break;
      case 'f':
        kind = Kind::false_;
        if (!literal("false")) return false;
        break;
      case 'n':
        kind = Kind::null;
        if (!literal("null")) return false;
        break;
      default:
        kind = Kind::number;
        if (!number()) return false;
    }
    Node& n = nodes_[at];
    n.begin = start;
    n.end = p_;
    n.kind = kind;
    return true;
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(e_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  }

  // Links `child` after `prev` (or first under `at`).
  void link(std::uint32_t at, std::uint32_t prev, std::uint32_t child) {
    if (prev == 0)
      nodes_[at].first = child;
    else
      nodes_[prev].next = child;
  }

  bool object(std::uint32_t at, int depth) {
    if (depth >= kMaxDepth) return false;
    ++p_;
    p_ = skip_ws(p_, e_);
    if (p_ < e_ && *p_ == '}') {
      ++p_;
      return true;
    }
    std::uint32_t prev = 0;
    while (true) {
      const char* key = p_ + 1;
      if (p_ >= e_ || *p_ != '"' || !string()) return false;
      const std::uint32_t child = add(key, static_cast<std::uint32_t>(p_ - 1 - key));
      if (child == 0) return false;
      link(at, prev, child);
      prev = child;
      p_ = skip_ws(p_, e_);
      if (p_ >= e_ || *p_ != ':') return false;
      p_ = skip_ws(p_ + 1, e_);
      if (!value(child, depth + 1)) return false;
      p_ = skip_ws(p_, e_);
      if (p_ >= e_) return false;
      if (*p_ == ',') {
        p_ = skip_ws(p_ + 1, e_);
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return true;
      }
      return false;
    }
  }

  bool array(std::uint32_t at, int depth) {
    if (depth >= kMaxDepth) return false;
    ++p_;
    p_ = skip_ws(p_, e_);
    if (p_ < e_ && *p_ == ']') {
      ++p_;
      return true;
    }
    std::uint32_t prev = 0;
    while (true) {
      const std::uint32_t child = add(nullptr, 0);
      if (child == 0) return false;
      link(at, prev, child);
      prev = child;
      if (!value(child, depth + 1)) return false;
      p_ = skip_ws(p_, e_);
      if (p_ >= e_) return false;
      if (*p_ == ',') {
        p_ = skip_ws(p_ + 1, e_);
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        return true;
      }
      return false;
    }
  }

  bool string() {
    ++p_;  // opening quote
    while (true) {
#ifdef __SSE2__
      // 16 bytes at a time: stop at a quote, a backslash or a control character.
      const __m128i quote = _mm_set1_epi8('"');
      const __m128i backslash = _mm_set1_epi8('\\');
      const __m128i ctrl_max = _mm_set1_epi8(0x1F);
      while (e_ - p_ >= 16) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl_max), ctrl_max));
        int mask = _mm_movemask_epi8(hit);
        if (mask != 0) {
          p_ += __builtin_ctz(static_cast<unsigned>(mask));
          break;
        }
        p_ += 16;
      }
#endif
      // Unrolled path over ordinary bytes.
      while (e_ - p_ >= 8) {
        const auto* u = reinterpret_cast<const unsigned char*>(p_);
        if (kStringStops[u[0]]) break;
        if (kStringStops[u[1]]) {
          p_ += 1;
          break;
        }
        if (kStringStops[u[2]]) {
          p_ += 2;
          break;
        }
        if (kStringStops[u[3]]) {
          p_ += 3;
          break;
        }
        if (kStringStops[u[4]]) {
          p_ += 4;
          break;
        }
        if (kStringStops[u[5]]) {
          p_ += 5;
          break;
        }
        if (kStringStops[u[6]]) {
          p_ += 6;
          break;
        }
        if (kStringStops[u[7]]) {
          p_ += 7;
          break;
        }
        p_ += 8;
      }
      while (p_ < e_ && !kStringStops[static_cast<unsigned char>(*p_)]) ++p_;
      if (p_ >= e_) return false;
      char c = *p_;
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c != '\\') return false;  // raw control character
      ++p_;
      if (p_ >= e_) return false;
      switch (*p_) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          ++p_;
          break;
        case 'u':
          if (e_ - p_ < 5 || !is_hex(p_[1]) || !is_hex(p_[2]) || !is_hex(p_[3]) || !is_hex(p_[4]))
            return false;
          p_ += 5;
          break;
        default:
          return false;
      }
    }
  }

  bool number() {
    if (p_ < e_ && *p_ == '-') ++p_;
    if (p_ >= e_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      while (p_ < e_ && is_digit(*p_)) ++p_;
    } else {
      return false;
    }
    if (p_ < e_ && *p_ == '.') {
      ++p_;
      if (p_ >= e_ || !is_digit(*p_)) return false;
      while (p_ < e_ && is_digit(*p_)) ++p_;
    }
    if (p_ < e_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < e_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= e_ || !is_digit(*p_)) return false;
      while (p_ < e_ && is_digit(*p_)) ++p_;
    }
    return true;
  }

  const char* p_;
  const char* e_;
  std::vector<Node>& nodes_;
};

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::uint32_t hex4(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= static_cast<std::uint32_t>(c - 'A' + 10);
  }
  return v;
}

// Length of a valid UTF-8 sequence at p, or 0.
std::size_t utf8_len(const unsigned char* p, std::size_t n) {
  unsigned char c = p[0];
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
  } else
    return 0;
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

bool needs_sanitize(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII (most of what is decoded), eight bytes at a time, then straight to the first byte
    // that is not.
    for (std::uint64_t word = 0; i + 8 <= n; i += 8) {
      std::memcpy(&word, p + i, 8);
      word &= 0x8080808080808080ULL;
      if (word != 0) {
        if constexpr (std::endian::native == std::endian::little)
          i += static_cast<std::size_t>(std::countr_zero(word) / 8);
        break;
      }
    }
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const std::size_t l = utf8_len(p + i, n - i);
    if (l == 0) return true;
    i += l;
  }
  return false;
}

}  // namespace

struct Document::Impl {
  std::vector<Node> nodes;
};

Document::Document() : impl_(std::make_unique<Impl>()) {}
Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

Value Document::parse(std::string_view text) {
  const std::uint32_t root = Validator(text.data(), text.data() + text.size(), impl_->nodes).run();
  if (root == 0) return {};
  return detail::child(impl_->nodes.data(), root);
}

namespace {

// A key as written (escapes and all) against a decoded name.
bool key_matches(std::string_view raw_key, std::string_view key) {
  if (raw_key.find('\\') == std::string_view::npos) return raw_key == key;
  // Built by append: GCC 12 warns (-Wrestrict, wrongly) of `"\"" + std::string(...)` at -O3.
  std::string quoted;
  quoted.reserve(raw_key.size() + 2);
  quoted.push_back('"');
  quoted.append(raw_key);
  quoted.push_back('"');
  return Value{quoted.data(), quoted.data() + quoted.size(), Kind::string}.str() == key;
}

}  // namespace

Value Value::operator[](std::string_view key) const {
  Value found;
  for_each_member(*this, [&](std::string_view raw_key, Value v) {
    if (!key_matches(raw_key, key)) return true;
    found = v;
    return false;
  });
  return found;
}

namespace {

// The decoded text of a string's body (what lies between its quotes, or the start of it).
std::string decode(std::string_view body) {
  if (body.find('\\') == std::string_view::npos) {
    if (needs_sanitize(body)) return sanitize_utf8(body);
    return std::string(body);
  }
  std::string out;
  out.reserve(body.size());
  const char* p = body.data();
  const char* e = p + body.size();
  while (p < e) {
    const void* q = std::memchr(p, '\\', static_cast<std::size_t>(e - p));
    const char* bs = q ? static_cast<const char*>(q) : e;
    out.append(p, bs);
    if (bs >= e) break;
    p = bs + 1;
    if (p >= e) break;
    char c = *p++;
    switch (c) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        if (e - p < 4) {
          p = e;
          break;
        }
        std::uint32_t cp = hex4(p);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            std::uint32_t lo = hex4(p + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              p += 6;
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              cp = 0xFFFD;
            }
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default:
        out.push_back(c);
        break;  // " \ /
    }
  }
  if (needs_sanitize(out)) return sanitize_utf8(out);
  return out;
}

}  // namespace

std::string Value::str() const {
  if (kind != Kind::string) return {};
  return decode(std::string_view(begin + 1, static_cast<std::size_t>(end - begin - 2)));
}

std::string Value::str_prefix(std::size_t max_raw) const {
  if (kind != Kind::string) return {};
  std::size_t body = static_cast<std::size_t>(end - begin - 2);
  if (body <= max_raw) return str();
  // Cut before any escape sequence that the limit would split (at most \uXXXX\uXXXX).
  const char* cut = begin + 1 + max_raw;
  const char* scan_from = cut - 12 > begin + 1 ? cut - 12 : begin + 1;
  for (const char* q = scan_from; q < cut; ++q) {
    if (*q == '\\') {
      const char* esc_end = q + (q[1] == 'u' ? 6 : 2);
      if (esc_end > cut) {
        cut = q;
        break;
      }
      q = esc_end - 1;
    }
  }
  return decode(std::string_view(begin + 1, static_cast<std::size_t>(cut - begin - 1)));
}

bool Value::equals(std::string_view s) const {
  if (kind != Kind::string) return false;
  std::string_view body(begin + 1, static_cast<std::size_t>(end - begin - 2));
  if (body.find('\\') == std::string_view::npos) return body == s;
  return str() == s;
}

std::optional<std::int64_t> Value::integer() const {
  if (kind != Kind::number) return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc() && ptr == end) return v;
  auto d = number();
  if (d && *d >= -9.2e18 && *d <= 9.2e18) return static_cast<std::int64_t>(*d);
  return std::nullopt;
}

std::optional<double> Value::number() const {
  if (kind != Kind::number) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc()) return v;
  return std::nullopt;
}

nlohmann::json Value::to_json() const {
  if (kind == Kind::none) return nullptr;
  if (kind == Kind::string) return str();
  auto j = nlohmann::json::parse(begin, end, nullptr, false);
  if (j.is_discarded()) return nullptr;
  return j;
}

bool valid_utf8(std::string_view s) {
  return !needs_sanitize(s);
}

std::string sanitize_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size(), i = 0;
  while (i < n) {
    std::size_t l = utf8_len(p + i, n - i);
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

}  // namespace parallex::transcripts::scan
