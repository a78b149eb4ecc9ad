#include "report/proxy_summary.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/json_lines.hpp"

namespace px::report {

namespace {

struct HostStat {
  std::string host;
  std::uint64_t port = 0;
  std::uint64_t connections = 0, bytes_up = 0, bytes_down = 0;
  std::vector<std::string> reasons;
};

struct Group {
  std::vector<HostStat> hosts;
  std::map<std::pair<std::string, std::uint64_t>, std::size_t> index;

  void add(const std::string& host, std::uint64_t port, std::uint64_t up, std::uint64_t down,
           const std::string& reason) {
    auto [it, inserted] = index.try_emplace({host, port}, hosts.size());
    if (inserted) {
      HostStat fresh;
      fresh.host = host;
      fresh.port = port;
      hosts.push_back(std::move(fresh));
    }
    HostStat& h = hosts[it->second];
    ++h.connections;
    h.bytes_up += up;
    h.bytes_down += down;
    if (!reason.empty() && std::find(h.reasons.begin(), h.reasons.end(), reason) == h.reasons.end())
      h.reasons.push_back(reason);
  }

  Json to_json() const {
    Json out = Json::array();
    for (const auto& h : hosts)
      out.push_back(Json{{"host", h.host},
                         {"port", h.port},
                         {"connections", h.connections},
                         {"bytes_up", h.bytes_up},
                         {"bytes_down", h.bytes_down},
                         {"reasons", h.reasons}});
    return out;
  }
};

std::uint64_t number_or_zero(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

}  // namespace

Json summarize_proxy_log(const std::filesystem::path& log, Source& source) {
  source.location = log.string();
  Json out{{"reached", Json::array()},
           {"refused", Json::array()},
           {"failed", Json::array()},
           {"lines", 0},
           {"bad_lines", 0}};
  Group reached, refused, failed;
  const auto read = read_json_lines(log, [&](const nlohmann::json& j) {
    if (!j.contains("host") || !j["host"].is_string() || !j.contains("verdict") || !j["verdict"].is_string())
      return false;
    const std::string host = j["host"].get<std::string>();
    const std::string verdict = j["verdict"].get<std::string>();
    const std::string reason =
        j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "";
    const std::uint64_t port = number_or_zero(j, "port");
    const std::uint64_t up = number_or_zero(j, "bytes_up"), down = number_or_zero(j, "bytes_down");
    // A DNS answer is not a connection: only the run's refused questions are
    // listed (as refused, "host:53"); the connections that followed are.
    const bool dns = j.contains("method") && j["method"] == "DNS";
    if (dns && verdict != "denied") return true;
    if (verdict == "allowed")
      reached.add(host, port, up, down, reason);
    else if (verdict == "failed")
      failed.add(host, port, up, down, reason);
    else
      refused.add(host, port, up, down,
                  dns                   ? "dns: " + reason
                  : verdict == "denied" ? reason
                                        : verdict + (reason.empty() ? "" : ": " + reason));
    return true;
  });
  if (!read) {
    source.status = "missing";
    source.message =
        read.error().kind == ErrorKind::not_found
            ? "The proxy log " + log.string() +
                  " does not exist: the run was offline, or the log was removed. No host is listed."
            : "The proxy log " + log.string() + " cannot be read; check its permissions.";
    return out;
  }
  const std::uint64_t lines = read.value().lines, bad = read.value().bad;
  out["reached"] = reached.to_json();
  out["refused"] = refused.to_json();
  out["failed"] = failed.to_json();
  out["lines"] = lines;
  out["bad_lines"] = bad;
  if (bad) {
    source.status = "partial";
    source.message = std::to_string(bad) + " of " + std::to_string(lines) + " lines of " + log.string() +
                     " are not proxy decisions and were skipped.";
  }
  return out;
}

}  // namespace px::report
