#pragma once
// Time as records and events write it.
#include <string>

namespace px {

// Now in UTC with milliseconds: "2026-11-30T01:02:03.456Z".
std::string iso_utc_now();

}  // namespace px
