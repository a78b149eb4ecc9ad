#pragma once
// A harness plugin's session text, read as outside input and printed masked.
//
// A session comes from a plugin's process as compact JSON: megabytes for a
// long Codex session. `parallex transcripts --json` prints each one indented,
// with every string masked (common/redact.hpp). Read into a DOM and dumped
// again, the host spent longer on them than the plugin took to parse the
// transcripts; read with simdjson's On-Demand API, each value is checked and
// written out as it is met, and nothing is held but the text.
#include <memory>
#include <string_view>

#include "common/error.hpp"

namespace px::report {

// One reader for many sessions: its parser and buffers are reused, so the
// memory a session is read and written in is not made afresh for the next.
class SessionMasker {
 public:
  SessionMasker();
  ~SessionMasker();
  SessionMasker(const SessionMasker&) = delete;
  SessionMasker& operator=(const SessionMasker&) = delete;

  // `text` as `nlohmann::ordered_json::dump(2)` prints it once its string
  // values are masked, each line `indent` spaces further in (an element of an
  // array is 2 in). Keys are printed as they are: they are the plugin's names
  // for fields. Numbers keep their text, once checked to be numbers. An error,
  // saying why, when `text` is not exactly one JSON object (valid UTF-8,
  // nesting no deeper than kMaxJsonDepth, common/json_io.hpp) or an object in
  // it repeats a key. The view is valid until the next call.
  Result<std::string_view> masked(std::string_view text, int indent = 0);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace px::report
