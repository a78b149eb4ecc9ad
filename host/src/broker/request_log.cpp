#include "broker/request_log.hpp"

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

nlohmann::ordered_json to_json(const RequestRecord& r, std::chrono::system_clock::time_point when) {
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
  return j;
}

std::string to_json_line(const RequestRecord& r, std::chrono::system_clock::time_point when) {
  return to_json_text(to_json(r, when)) + "\n";
}

Result<std::unique_ptr<RequestLog>> RequestLog::open(const std::filesystem::path& path) {
  PX_TRY_ASSIGN(auto file, JsonLinesWriter::open(path, "the request log"));
  auto log = std::make_unique<RequestLog>();
  log->file_ = std::move(file);
  return log;
}

void RequestLog::write(const RequestRecord& r) {
  // A full disk loses log lines, not requests.
  file_.append(to_json(r, std::chrono::system_clock::now()));
}

}  // namespace px::broker
