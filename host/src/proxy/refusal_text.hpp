#pragma once
// What a refusal says to the program that was refused, in words a person or a
// model can act on: the body of the proxy's answer and the extra text of the
// run's DNS answer (an extended DNS error). It echoes a host only once that
// host passed the name check, so no client bytes are reflected.
#include <string>
#include <string_view>

namespace px::proxy {

// One or two sentences ending in a newline. `run_id` (may be empty) is named
// in the command that would allow the host.
std::string explain_refusal(std::string_view reason, const std::string& host, std::string_view run_id);
// The same without its final newline, for a DNS answer's extended error.
std::string refusal_line(std::string_view reason, const std::string& host, std::string_view run_id);

}  // namespace px::proxy
