#include "cli/output.hpp"

#include <unistd.h>

#include "common/redact.hpp"

namespace px::cli {

// The exit status table of the commands that do not run something (README,
// "Run options and exit status"); run commands use run::exit_status.
int report_error(const Error& error) {
  std::fprintf(stderr, "parallex: %s\n", redact(error.message).c_str());
  switch (error.kind) {
    case ErrorKind::invalid_input: return 2;
    case ErrorKind::not_found: return 3;
    case ErrorKind::unsupported: return 4;
    case ErrorKind::conflict: return 5;
    default: return 1;
  }
}

void print_json(const nlohmann::json& value) {
  std::printf("%s\n", value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

bool stdout_is_tty() { return ::isatty(STDOUT_FILENO) == 1; }

}  // namespace px::cli
