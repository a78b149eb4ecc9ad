#include "proxy/decision_log.hpp"

#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/json_io.hpp"

namespace px::proxy {

nlohmann::ordered_json to_json(const Decision& d, std::chrono::system_clock::time_point when) {
  nlohmann::ordered_json j;
  j["time"] =
      iso_utc_ms(std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count());
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
  if (d.question != 0) {
    j["question"] = d.question;
    j["answer"] = d.answer;
  }
  j["bytes_up"] = d.bytes_up;
  j["bytes_down"] = d.bytes_down;
  j["duration_ms"] = d.duration.count();
  return j;
}

std::string to_json_line(const Decision& d, std::chrono::system_clock::time_point when) {
  // replace: a host with invalid UTF-8 must not make the log throw. Control
  // characters are escaped by the writer (\r, \n, \u0000).
  return to_json_text(to_json(d, when)) + "\n";
}

Result<DecisionLog> DecisionLog::open(const std::filesystem::path& path) {
  PX_TRY_ASSIGN(auto file, JsonLinesWriter::open(path, "the proxy log"));
  DecisionLog log;
  log.file_ = std::move(file);
  return log;
}

void DecisionLog::write(const Decision& d) {
  // A full disk loses log lines, not connections; the decision itself stands.
  file_.append(to_json(d, std::chrono::system_clock::now()));
}

}  // namespace px::proxy
