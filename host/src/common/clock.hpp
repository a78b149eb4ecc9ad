#pragma once
// Time as records and events write it.
#include <cstdint>
#include <string>

namespace px {

// Milliseconds since the epoch in UTC: "2026-11-30T01:02:03.456Z".
std::string iso_utc_ms(std::int64_t ms);
// Now, in the same form.
std::string iso_utc_now();

}  // namespace px
