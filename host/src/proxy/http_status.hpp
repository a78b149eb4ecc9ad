#pragma once
// The reason phrase of each status the proxy and the broker answer with (one
// list for both: a client sees the same words from either).
#include <string_view>

namespace px::proxy {

std::string_view status_text(int status);

}  // namespace px::proxy
