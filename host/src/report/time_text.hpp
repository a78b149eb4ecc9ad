#pragma once
// Times as the run records and transcripts write them (ISO 8601 UTC with
// milliseconds) and as a user gives them to --since.
#include <cstdint>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace px::report {

// "2026-11-29T19:04:33.123Z", "2026-11-29T19:04:33+02:00", "2026-11-29 19:04", "2026-11-29".
// A time without a zone is UTC. nullopt when `text` is none of these.
std::optional<std::int64_t> parse_iso_ms(const std::string& text);
// "2026-11-29T19:04:33.123Z".
std::string format_iso_ms(std::int64_t ms);
std::int64_t now_ms();
// --since: an ISO time (see parse_iso_ms) or an age: "90s", "30m", "2h", "3d", "1w".
Result<std::int64_t> parse_since(const std::string& text, std::int64_t now);
// "12.3 s", "4 min 05 s", "2 h 03 min".
std::string format_duration(std::int64_t ms);

}  // namespace px::report
