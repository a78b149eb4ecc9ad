#pragma once
// JSON at the process's edges.
//
// In: JSON that comes from outside the process: an MCP client's messages, the
// control socket's, a plugin's sessions, a token's claims. nlohmann's parser
// keeps its own stack, but copying, comparing, dumping and destroying a value
// recurse: a message nested a hundred thousand deep parses, then overflows
// the stack the moment it is used. Such input is refused before it is parsed.
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>

namespace px {

// Deeper than any message Parallex reads has reason to be, far from the stack's limit.
inline constexpr int kMaxJsonDepth = 128;

// Whether comments (// and /* */) are read as white space, as in the JSON
// files some programs keep (Claude Code's, VS Code's), or are an error.
enum class JsonComments { refused, ignored };

// Whether arrays and objects in `text` nest deeper than `max_depth` (strings
// and their escapes are skipped, and comments when they are ignored: a quote
// or a bracket in one counts for nothing; the text need not be valid JSON).
bool json_nests_deeper_than(std::string_view text, int max_depth,
                            JsonComments comments = JsonComments::refused);

// ordered_json's own parse, without its cost on large objects: an ordered
// object is a vector of pairs whose key is const, so the vector cannot move
// them when it grows and copies every member parsed so far, each with all it
// holds (a session's thousands of commands, again at every growth: parsing the
// sessions of 200 MB of transcripts took 2.3 times as long as into a
// nlohmann::json). This builds each object once its members are all read.
// The same value as ordered_json::parse gives, or a discarded one. Never throws.
nlohmann::ordered_json parse_ordered_json(std::string_view text, JsonComments comments);

// The parsed value, or a discarded one (is_discarded()) when `text` is not
// valid JSON or nests deeper than kMaxJsonDepth. Never throws.
// Json: nlohmann::json or nlohmann::ordered_json.
template <class Json = nlohmann::json>
Json parse_json_input(std::string_view text, JsonComments comments = JsonComments::refused) {
  if (json_nests_deeper_than(text, kMaxJsonDepth, comments)) return Json(Json::value_t::discarded);
  if constexpr (std::is_same_v<Json, nlohmann::ordered_json>)
    return parse_ordered_json(text, comments);
  else
    return Json::parse(text, nullptr, /*allow_exceptions=*/false,
                       /*ignore_comments=*/comments == JsonComments::ignored);
}

// Out: a value as text that never throws. Paths, arguments and variables are
// bytes, not always UTF-8 (a folder named in Latin-1, an argument of raw
// bytes); JSON strings must be UTF-8, so an invalid byte becomes U+FFFD.
// Every record, registry entry, answer and event is written through this.
template <class Json>
std::string to_json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace px
