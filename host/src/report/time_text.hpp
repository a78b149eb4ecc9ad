#pragma once
// Times as the run records and transcripts write them (ISO 8601 UTC with
// milliseconds) and as a user gives them to --since.
#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace px::report {

// parse_iso_ms (common/clock.hpp) reads the times records, transcripts and users give.
// "2026-11-29T19:04:33.123Z".
std::string format_iso_ms(std::int64_t ms);
std::int64_t now_ms();
// --since: an ISO time (see parse_iso_ms) or an age: "90s", "30m", "2h", "3d", "1w".
Result<std::int64_t> parse_since(const std::string& text, std::int64_t now);
// "12.3 s", "4 min 05 s", "2 h 03 min".
std::string format_duration(std::int64_t ms);

}  // namespace px::report
