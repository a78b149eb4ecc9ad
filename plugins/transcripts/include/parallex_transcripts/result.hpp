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

}  // namespace parallex::transcripts
