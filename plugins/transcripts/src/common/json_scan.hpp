#pragma once
// A validating, allocation-free JSON scanner for transcript lines. Transcripts are
// dominated by large strings (file contents, command output) the parsers never look
// at; building a DOM for them costs most of the time. The scanner validates a line
// once, then lets a parser pick the few fields it needs by key, decoding only those.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace parallex::transcripts::scan {

enum class Kind : char { none = 0, object, array, string, number, true_, false_, null };

struct Value {
  const char* begin = nullptr;
  const char* end = nullptr;
  Kind kind = Kind::none;

  explicit operator bool() const { return kind != Kind::none; }
  bool is_object() const { return kind == Kind::object; }
  bool is_array() const { return kind == Kind::array; }
  bool is_string() const { return kind == Kind::string; }
  bool is_number() const { return kind == Kind::number; }
  bool is_null() const { return kind == Kind::null; }
  std::string_view raw() const { return {begin, static_cast<std::size_t>(end - begin)}; }

  // Member of an object (none when absent or when this is not an object).
  Value operator[](std::string_view key) const;
  // Decoded string (UTF-8, invalid bytes replaced); empty when not a string.
  std::string str() const;
  // The decoded string's start (about `max_raw` bytes of its JSON text): for markers that
  // sit at the beginning of long outputs, without decoding all of them.
  std::string str_prefix(std::size_t max_raw) const;
  // True when this is a string equal to `s` (compared without decoding when possible).
  bool equals(std::string_view s) const;
  std::optional<std::int64_t> integer() const;
  std::optional<double> number() const;
  bool truthy() const { return kind == Kind::true_; }
  // The subtree as nlohmann::json (null when it cannot be represented).
  nlohmann::json to_json() const;
};

// Validates that `text` is exactly one JSON value; kind none when it is not.
Value parse(std::string_view text);

// Iterates members of an object: f(std::string_view raw_key, Value value); stops when f returns false.
template <class F>
void for_each_member(Value obj, F&& f);
// Iterates elements of an array: f(Value); stops when f returns false.
template <class F>
void for_each_element(Value arr, F&& f);

// Replaces invalid UTF-8 so that nlohmann::json can dump the string.
std::string sanitize_utf8(std::string_view in);

// ---- implementation details used by the templates ----------------------------------
namespace detail {
const char* skip_ws(const char* p, const char* e);
const char* skip_value(const char* p, const char* e);  // p at a value start; returns one past it
Value value_at(const char* p, const char* e);          // p at a value start
bool key_equals(std::string_view raw_key, std::string_view key);
}  // namespace detail

template <class F>
void for_each_member(Value obj, F&& f) {
  if (!obj.is_object()) return;
  const char* p = detail::skip_ws(obj.begin + 1, obj.end);
  while (p < obj.end && *p == '"') {
    const char* key_end = detail::skip_value(p, obj.end);
    std::string_view raw_key(p + 1, static_cast<std::size_t>(key_end - p - 2));
    p = detail::skip_ws(key_end, obj.end);
    if (p >= obj.end || *p != ':') return;
    p = detail::skip_ws(p + 1, obj.end);
    Value v = detail::value_at(p, obj.end);
    if (!v) return;
    if (!f(raw_key, v)) return;
    p = detail::skip_ws(v.end, obj.end);
    if (p < obj.end && *p == ',') p = detail::skip_ws(p + 1, obj.end);
  }
}

template <class F>
void for_each_element(Value arr, F&& f) {
  if (!arr.is_array()) return;
  const char* p = detail::skip_ws(arr.begin + 1, arr.end);
  while (p < arr.end && *p != ']') {
    Value v = detail::value_at(p, arr.end);
    if (!v) return;
    if (!f(v)) return;
    p = detail::skip_ws(v.end, arr.end);
    if (p < arr.end && *p == ',') p = detail::skip_ws(p + 1, arr.end);
  }
}

}  // namespace parallex::transcripts::scan
