#pragma once
// The hosts a run's proxy let through and refused, from its proxy.jsonl.
#include <filesystem>

#include "report/model.hpp"

namespace px::report {

// {"reached": [...], "refused": [...], "failed": [...], "lines": N, "bad_lines": N}
// Each entry: {host, port, connections, bytes_up, bytes_down, reasons[]}, grouped by
// host and port, in order of first appearance. A line that is not a decision is
// counted in bad_lines and skipped. `source` is filled in (status, message).
Json summarize_proxy_log(const std::filesystem::path& log, Source& source);

}  // namespace px::report
