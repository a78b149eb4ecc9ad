#include "run/status.hpp"

#include <array>
#include <utility>

namespace px::run {

namespace {

constexpr std::array<std::pair<RunStatus, const char*>, 10> kStatusNames{{
    {RunStatus::starting, "starting"},
    {RunStatus::running, "running"},
    {RunStatus::exited, "exited"},
    {RunStatus::signaled, "signaled"},
    {RunStatus::not_found, "not-found"},
    {RunStatus::not_executable, "not-executable"},
    {RunStatus::setup_failed, "setup-failed"},
    {RunStatus::killed, "killed"},
    {RunStatus::interrupted, "interrupted"},
    {RunStatus::lost, "lost"},
}};

}  // namespace

const char* to_string(RunStatus status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "lost";
}

std::optional<RunStatus> status_from_string(const std::string& text) {
  for (const auto& [s, name] : kStatusNames)
    if (text == name) return s;
  return std::nullopt;
}

int exit_status(RunStatus status, int code, int signal) {
  switch (status) {
    case RunStatus::exited:
      return code;
    case RunStatus::signaled:
    case RunStatus::killed:
    case RunStatus::interrupted:
      return signal > 0 ? 128 + signal : code;
    case RunStatus::not_found:
      return kExitNotFound;
    case RunStatus::not_executable:
      return kExitNotExecutable;
    case RunStatus::setup_failed:
    case RunStatus::starting:
    case RunStatus::running:
    case RunStatus::lost:
      return kExitSetupFailed;
  }
  return kExitSetupFailed;
}

}  // namespace px::run
