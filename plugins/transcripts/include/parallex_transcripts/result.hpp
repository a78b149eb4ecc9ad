#pragma once
// What every transcript parser returns. The session objects follow the extraction
// contract in docs/transcripts.md (the shape of the fixtures' EXPECTED.json sessions).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace parallex::transcripts {

// A problem with one input that did not stop the others (missing, unreadable, locked).
struct Warning {
  std::string path;
  std::string message;
};

// The form a parser hands each session back in: the object (tests, fuzzing), or the compact
// JSON text a plugin hands to the host. A text is written on the thread that built its session,
// which lets the object go at once: holding every session's object until all were read was most
// of a Codex parse's memory, and its page faults a third of its time.
enum class Form { object, text };

struct ParseResult {
  std::vector<nlohmann::json> sessions;  // Form::object
  std::vector<std::string> texts;        // Form::text
  std::vector<Warning> warnings;
};

// Bounds in epoch ms; 0 = unbounded. A session is kept when [started, ended] overlaps [since, until].
struct Window {
  std::int64_t since_ms = 0;
  std::int64_t until_ms = 0;
};

// The sessions as the compact JSON text a plugin hands to the host, in the same order.
struct SessionTexts {
  std::vector<std::string> sessions;
  std::vector<Warning> warnings;
};

// A parser as a plugin binds it: <parallex/transcripts.hpp>'s ReadsTranscripts
// hands text over as it is.
template <auto Parse>
SessionTexts parse_to_texts(const std::vector<std::string>& paths, Window window) {
  ParseResult r = Parse(paths, window, Form::text);
  return {std::move(r.texts), std::move(r.warnings)};
}

}  // namespace parallex::transcripts
