#pragma once
// Time as records and events write it.
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

namespace px {

// Milliseconds since the epoch in UTC: "2026-11-30T01:02:03.456Z".
std::string iso_utc_ms(std::int64_t ms);
// Now, in the same form.
std::string iso_utc_now();
// Whole seconds since the epoch in UTC: "2026-11-30T01:02:03Z".
std::string iso_utc_seconds(std::time_t seconds);
// "2026-11-29T19:04:33.123Z", "2026-11-29T19:04:33+02:00", "2026-11-29 19:04", "2026-11-29":
// milliseconds since the epoch. A time without a zone is UTC. nullopt when
// `text` is none of these. The one reader of a time for records, transcripts,
// profiles and users.
std::optional<std::int64_t> parse_iso_ms(const std::string& text);

}  // namespace px
