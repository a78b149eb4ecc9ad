// libFuzzer target over the audit records the supervisor parses to learn what
// Landlock refused: each input line is "TYPE TEXT"; the records go through the
// parser and the run's log, which then reports the run's refusals.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "backend/seal/audit_log.hpp"
#include "backend/seal/refusals.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace px::seal;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  audit::LandlockLog log;
  log.set_domain_creator(42);
  std::size_t at = 0;
  while (at < input.size()) {
    std::size_t end = input.find('\n', at);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(at, end - at);
    at = end + 1;
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 5) continue;
    int type = 0;
    for (char c : line.substr(0, space)) type = c >= '0' && c <= '9' ? type * 10 + (c - '0') : -1;
    if (type < 0) continue;
    if (auto record = audit::parse_record(type, std::string(line.substr(space + 1)))) log.take(*record);
  }
  Refusals out;
  log.finish(out);
  for (const auto& r : out.items)
    if (r.source != "landlock" || r.count == 0) __builtin_trap();
  (void)out.summary();
  // The seccomp side names calls from raw numbers the kernel reports.
  if (size >= 16) {
    std::uint64_t a = 0, b = 0;
    for (int i = 0; i < 8; ++i) {
      a = a << 8 | data[i];
      b = b << 8 | data[8 + i];
    }
    (void)describe_refused_call(0xc000003eU, static_cast<int>(a % 1024), a, b);
  }
  return 0;
}
