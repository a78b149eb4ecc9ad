#pragma once
// The requests a run's credential broker saw on its terminated hosts, from
// its requests.jsonl (docs/broker.md, "Request log").
#include <filesystem>

#include "report/model.hpp"

namespace px::report {

// {"hosts": [...], "exfiltration": [...], "connections_refused": [...], "lines": N, "bad_lines": N}
//   hosts:        {host, requests, refused, bytes_up, bytes_down, reasons[], credentials[]} per host,
//                 in order of first appearance; a request refused by a rule or a credential counts in refused
//   exfiltration: {host, detail, count}: a placeholder seen going where it may not go
//   connections_refused: {host, reason, count}: a connection refused before its first request
// `source` is filled in (status, message).
Json summarize_request_log(const std::filesystem::path& log, Source& source);

}  // namespace px::report
