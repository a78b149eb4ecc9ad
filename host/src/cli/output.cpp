#include "cli/output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "common/json_io.hpp"
#include "common/redact.hpp"
#include "common/shown.hpp"

namespace px::cli {

// The exit status table of the commands that do not run something (README,
// "Run options and exit status"); run commands use run::exit_status.
void say(const std::string& message) {
  std::fprintf(stderr, "parallex: %s\n", shown_lines(redact(message)).c_str());
}

int report_error(const Error& error) {
  say(error.message);
  switch (error.kind) {
    case ErrorKind::invalid_input:
      return 2;
    case ErrorKind::not_found:
      return 3;
    case ErrorKind::unsupported:
      return 4;
    case ErrorKind::conflict:
      return 5;
    default:
      return 1;
  }
}

void print_json(const nlohmann::json& value) {
  std::printf("%s\n", to_json_text(value, 2).c_str());
}

bool stdout_is_tty() {
  return ::isatty(STDOUT_FILENO) == 1;
}

bool colour_on_stdout() {
  if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
  if (const char* term = std::getenv("TERM"); term && std::string_view(term) == "dumb") return false;
  return stdout_is_tty();
}

bool confirm(const std::string& question, bool yes) {
  if (yes) return true;
  if (!::isatty(STDIN_FILENO)) return false;
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes" || answer == "Yes";
}

}  // namespace px::cli
