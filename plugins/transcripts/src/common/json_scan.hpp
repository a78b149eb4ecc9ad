#pragma once
// A validating JSON scanner for transcript lines. Transcripts are dominated by large
// strings (file contents, command output) the parsers never look at; building a DOM
// for them costs most of the time. A Document validates a line once and writes down
// where each of its values begins and ends (a table of nodes; no string is copied),
// then a parser picks the few fields it needs by key, decoding only those.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallex::transcripts::scan {

enum class Kind : char { none = 0, object, array, string, number, true_, false_, null };

class Document;

// A value's place in a Document: its text, and for an object or array its first
// member or element (members are linked by `next`; 0 ends the list).
struct Node {
  const char* begin = nullptr;
  const char* end = nullptr;
  const char* key = nullptr;  // a member's key, as written between its quotes
  std::uint32_t key_size = 0;
  Kind kind = Kind::none;
  std::uint32_t first = 0, next = 0;
};

struct Value {
  const char* begin = nullptr;
  const char* end = nullptr;
  Kind kind = Kind::none;
  const Node* nodes = nullptr;  // the Document's nodes (objects and arrays only)
  std::uint32_t at = 0;

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

// Where the values of one JSON text are. Its Values point into that text (which
// must outlive them) and into its table, valid until its next parse(): keep one
// Document per loop, and its table's memory is reused.
class Document {
 public:
  Document();
  ~Document();
  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;

  // Validates `text` as exactly one JSON value; the root is none when it is not
  // (or when it nests deeper than 512 levels, or holds more than 2^20 values).
  Value parse(std::string_view text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Iterates members of an object: f(std::string_view raw_key, Value value); stops when f returns false.
template <class F>
void for_each_member(Value obj, F&& f);
// Iterates elements of an array: f(Value); stops when f returns false.
template <class F>
void for_each_element(Value arr, F&& f);

// Replaces invalid UTF-8 so that nlohmann::json can dump the string.
std::string sanitize_utf8(std::string_view in);
// True when `s` is valid UTF-8 (sanitize_utf8 would return it unchanged).
bool valid_utf8(std::string_view s);

namespace detail {
inline Value child(const Node* nodes, std::uint32_t at) {
  const Node& n = nodes[at];
  return {n.begin, n.end, n.kind, nodes, at};
}
}  // namespace detail

template <class F>
void for_each_member(Value obj, F&& f) {
  if (!obj.is_object() || obj.nodes == nullptr) return;
  for (std::uint32_t at = obj.nodes[obj.at].first; at != 0; at = obj.nodes[at].next) {
    const Node& n = obj.nodes[at];
    if (!f(std::string_view(n.key, n.key_size), detail::child(obj.nodes, at))) return;
  }
}

template <class F>
void for_each_element(Value arr, F&& f) {
  if (!arr.is_array() || arr.nodes == nullptr) return;
  for (std::uint32_t at = arr.nodes[arr.at].first; at != 0; at = arr.nodes[at].next)
    if (!f(detail::child(arr.nodes, at))) return;
}

}  // namespace parallex::transcripts::scan
