#include "report/request_summary.hpp"

#include <algorithm>
#include <map>

#include "common/json_lines.hpp"

namespace px::report {

namespace {

std::string text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::uint64_t number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

void add_once(Json& list, const std::string& value) {
  if (value.empty()) return;
  for (const auto& v : list)
    if (v == value) return;
  list.push_back(value);
}

// Counted entries keyed by (host, what), in order of first appearance.
struct Counted {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::uint64_t> counts;
  void add(const std::string& host, const std::string& what) {
    if (counts[{host, what}]++ == 0) order.emplace_back(host, what);
  }
  Json to_json(const char* what_key) const {
    Json out = Json::array();
    for (const auto& k : order)
      out.push_back(Json{{"host", k.first}, {what_key, k.second}, {"count", counts.at(k)}});
    return out;
  }
};

}  // namespace

Json summarize_request_log(const std::filesystem::path& log, Source& source) {
  source.location = log.string();
  Json out{{"hosts", Json::array()},
           {"exfiltration", Json::array()},
           {"connections_refused", Json::array()},
           {"lines", 0},
           {"bad_lines", 0}};
  std::vector<std::string> order;
  std::map<std::string, Json> hosts;
  Counted attempts, refused_connections;
  const auto read = read_json_lines(log, [&](const nlohmann::json& j) {
    const std::string host = text(j, "host");
    if (host.empty() || text(j, "verdict").empty()) return false;
    const std::string reason = text(j, "reason");
    if (reason == "credential-exfiltration") attempts.add(host, text(j, "detail"));
    if (text(j, "method").empty()) {
      // A connection line (refused before its first request), or a
      // placeholder seen outside a terminated connection.
      if (reason != "credential-exfiltration") refused_connections.add(host, reason);
      return true;
    }
    auto [it, inserted] = hosts.try_emplace(host);
    if (inserted) {
      order.push_back(host);
      it->second = Json{{"host", host},
                        {"requests", 0},
                        {"refused", 0},
                        {"bytes_up", 0},
                        {"bytes_down", 0},
                        {"reasons", Json::array()},
                        {"credentials", Json::array()}};
    }
    Json& h = it->second;
    h["requests"] = h["requests"].get<std::uint64_t>() + 1;
    if (text(j, "verdict") != "allowed") {
      h["refused"] = h["refused"].get<std::uint64_t>() + 1;
      add_once(h["reasons"], reason);
    }
    h["bytes_up"] = h["bytes_up"].get<std::uint64_t>() + number(j, "bytes_up");
    h["bytes_down"] = h["bytes_down"].get<std::uint64_t>() + number(j, "bytes_down");
    const std::string creds = text(j, "credentials");
    for (std::size_t start = 0; start < creds.size();) {
      const std::size_t comma = std::min(creds.find(',', start), creds.size());
      add_once(h["credentials"], creds.substr(start, comma - start));
      start = comma + 1;
    }
    return true;
  });
  if (!read) {
    source.status = "missing";
    source.message = "The request log " + log.string() +
                     " cannot be read: it was removed, or the run ended "
                     "before its broker started. No request is listed.";
    return out;
  }
  const std::uint64_t lines = read.value().lines, bad = read.value().bad;
  for (const auto& host : order) out["hosts"].push_back(hosts[host]);
  out["exfiltration"] = attempts.to_json("detail");
  out["connections_refused"] = refused_connections.to_json("reason");
  out["lines"] = lines;
  out["bad_lines"] = bad;
  if (bad) {
    source.status = "partial";
    source.message = std::to_string(bad) + " of " + std::to_string(lines) + " lines of " + log.string() +
                     " are not request lines and were skipped.";
  }
  return out;
}

}  // namespace px::report
