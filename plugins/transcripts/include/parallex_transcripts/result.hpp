#pragma once
// What every transcript parser returns. The session objects follow the extraction
// contract in docs/transcripts.md (the shape of the fixtures' EXPECTED.json sessions).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace parallex::transcripts {

// A problem with one input that did not stop the others (missing, unreadable, locked).
struct Warning {
  std::string path;
  std::string message;
};

struct ParseResult {
  std::vector<nlohmann::json> sessions;
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
// Writes each session's text on the machine's cores (a plugin's one thread
// wrote 8 MB of Codex sessions after they were parsed on all of them).
SessionTexts to_texts(ParseResult&& result);

// A parser as a plugin binds it: <parallex/transcripts.hpp>'s ReadsTranscripts
// hands text over as it is.
template <auto Parse>
SessionTexts parse_to_texts(const std::vector<std::string>& paths, Window window) {
  return to_texts(Parse(paths, window));
}

}  // namespace parallex::transcripts
