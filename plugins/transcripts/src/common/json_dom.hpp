#pragma once
// Transcript lines parsed with simdjson's DOM. A line is validated and its tape built in one
// pass (SIMD); a parser then looks up the few fields it needs by key. Values are views into the
// parser that produced them, valid until its next parse: keep one Parser per kind of text
// (the line, JSON inside one of its strings) for as long as its values are used.
#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace parallex::transcripts::jsonl {

// A value, or an error (absent member, wrong type, not parsed): every accessor below takes
// either and answers "nothing" for an error, so lookups chain without checks.
using Value = simdjson::simdjson_result<simdjson::dom::element>;

class Parser {
 public:
  // Deeper nesting than this makes a text malformed (simdjson's default is 1024).
  static constexpr std::size_t kMaxDepth = 512;
  Parser();

  // One JSON text. `padded`: `text` is followed by SIMDJSON_PADDING readable bytes (LineReader's
  // lines are), so it is parsed where it is; otherwise it is copied first. A text whose strings
  // hold invalid UTF-8 or unpaired \u surrogate escapes is parsed with them replaced by U+FFFD
  // (what a transcript's writer meant is kept; the rest of the line still counts). Not an
  // error value only when the text is exactly one JSON value.
  Value parse(std::string_view text, bool padded = false);

 private:
  simdjson::dom::parser parser_;
  std::string copy_;      // a text that was not padded, with the padding after it
  std::string repaired_;  // the text with its invalid bytes or escapes replaced
};

// A string's text (empty for anything else): a view valid until the parser's next parse.
// Inline: the parsers call it for nearly every field they read.
inline std::string_view view(const Value& v) {
  std::string_view s;
  if (v.get(s) != simdjson::SUCCESS) return {};
  return s;
}
inline std::string str(const Value& v) {
  return std::string(view(v));
}
// The string's first `max` bytes (cut at a character boundary): markers sit at the start of
// long outputs.
std::string str_prefix(const Value& v, std::size_t max);
inline bool equals(const Value& v, std::string_view s) {
  return v.is_string() && view(v) == s;
}
// Whether `k` is the literal `name`. The length is known here, so the compiler compares the
// bytes inline (string_view's == calls out to a compare per key tried: a parser tries several
// keys on every member of every line).
template <std::size_t N>
inline bool key_is(std::string_view k, const char (&name)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), name, N - 1) == 0;
}
// equals() for a literal: the same, inline.
template <std::size_t N>
inline bool equals(const Value& v, const char (&s)[N]) {
  return v.is_string() && key_is(view(v), s);
}
// An integer, or a number that fits one (truncated); nothing for anything else.
std::optional<std::int64_t> integer(const Value& v);
inline bool truthy(const Value& v) {
  return v.is_bool() && v.get_bool().value_unsafe();
}
// A string's text, or any other value's JSON text (numbers in argv, ids written as numbers).
std::string text(const Value& v);
// The value as nlohmann::json (null for an error).
nlohmann::json to_json(const Value& v);

// Members of an object in order, f(std::string_view key, Value), until f returns false.
template <class F>
void for_each_member(const Value& obj, F&& f) {
  simdjson::dom::object o;
  if (obj.get(o) != simdjson::SUCCESS) return;
  for (auto field : o)
    if (!f(field.key, Value(simdjson::dom::element(field.value)))) return;
}

// Elements of an array in order, f(Value), until f returns false.
template <class F>
void for_each_element(const Value& arr, F&& f) {
  simdjson::dom::array a;
  if (arr.get(a) != simdjson::SUCCESS) return;
  for (simdjson::dom::element e : a)
    if (!f(Value(simdjson::dom::element(e)))) return;
}

// True when `s` is valid UTF-8.
bool valid_utf8(std::string_view s);
// `s` with each invalid UTF-8 sequence replaced by U+FFFD, so that nlohmann::json can dump it.
std::string sanitize_utf8(std::string_view s);

}  // namespace parallex::transcripts::jsonl
