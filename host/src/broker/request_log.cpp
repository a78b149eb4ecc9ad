#include "broker/request_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace px::broker {

std::string loggable_path(std::string_view target) {
  std::string out(target.substr(0, target.find('?')));
  if (out.size() > 512) out = out.substr(0, 512) + "...";
  if (target.find('?') != std::string_view::npos) out += "?[query]";
  return out;
}

std::string to_json_line(const RequestRecord& r, std::chrono::system_clock::time_point when) {
  nlohmann::ordered_json j;
  j["time"] =
      iso_utc_ms(std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count());
  j["host"] = r.host.substr(0, 256);
  j["port"] = r.port;
  if (!r.method.empty()) {
    j["method"] = r.method.substr(0, 32);
    j["path"] = redact(loggable_path(r.path));
  }
  j["status"] = r.status;
  j["verdict"] = r.verdict;
  j["reason"] = r.reason;
  if (!r.rule.empty()) j["rule"] = redact(r.rule);
  if (!r.credentials.empty()) j["credentials"] = r.credentials;
  if (!r.detail.empty()) j["detail"] = redact(r.detail.substr(0, 512));
  j["bytes_up"] = r.bytes_up;
  j["bytes_down"] = r.bytes_down;
  j["duration_ms"] = r.duration.count();
  return to_json_text(j) + "\n";
}

Result<std::unique_ptr<RequestLog>> RequestLog::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Error::io("open the request log " + path.string(), errno);
  auto log = std::make_unique<RequestLog>();
  log->fd_.reset(fd);
  return log;
}

void RequestLog::write(const RequestRecord& r) {
  if (!fd_) return;
  const std::string line = to_json_line(r, std::chrono::system_clock::now());
  // A full disk loses log lines, not requests.
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), line.data(), line.size());
}

}  // namespace px::broker
