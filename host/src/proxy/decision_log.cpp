#include "proxy/decision_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/json_io.hpp"

namespace px::proxy {

std::string to_json_line(const Decision& d, std::chrono::system_clock::time_point when) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  nlohmann::ordered_json j;
  j["time"] = stamp;
  j["method"] = d.method.substr(0, 32);
  j["host"] = d.host.substr(0, 256);
  j["port"] = d.port;
  j["verdict"] = d.verdict;
  j["reason"] = d.reason;
  j["status"] = d.status;
  if (!d.address.empty()) j["address"] = d.address;
  if (!d.closed.empty()) j["closed"] = d.closed;
  if (!d.inspected.empty()) j["inspected"] = d.inspected;
  if (!d.dns_type.empty()) j["type"] = d.dns_type.substr(0, 16);
  if (!d.rcode.empty()) j["rcode"] = d.rcode;
  j["bytes_up"] = d.bytes_up;
  j["bytes_down"] = d.bytes_down;
  j["duration_ms"] = d.duration.count();
  // replace: a host with invalid UTF-8 must not make the log throw. Control
  // characters are escaped by the writer (\r, \n, \u0000).
  return to_json_text(j) + "\n";
}

Result<DecisionLog> DecisionLog::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Error::io("open the proxy log " + path.string(), errno);
  DecisionLog log;
  log.fd_.reset(fd);
  return log;
}

void DecisionLog::write(const Decision& d) {
  if (!fd_) return;
  const std::string line = to_json_line(d, std::chrono::system_clock::now());
  // A full disk loses log lines, not connections; the decision itself stands.
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), line.data(), line.size());
}

}  // namespace px::proxy
