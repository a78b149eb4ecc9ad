#include "report/proxy_summary.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/json_lines.hpp"
#include "common/port.hpp"
#include "proxy/reasons.hpp"

namespace px::report {

namespace {

struct HostStat {
  std::string host;
  std::uint64_t port = 0;
  std::uint64_t connections = 0, bytes_up = 0, bytes_down = 0;
  std::vector<std::string> reasons;
  std::uint64_t first_line = 0;  // where it first appeared in the log
};

using Target = std::pair<std::string, std::uint64_t>;

struct Group {
  std::vector<HostStat> hosts;
  std::map<Target, std::size_t> index;

  void add(const std::string& host, std::uint64_t port, std::uint64_t connections, std::uint64_t up,
           std::uint64_t down, const std::vector<std::string>& reasons, std::uint64_t line) {
    auto [it, inserted] = index.try_emplace({host, port}, hosts.size());
    if (inserted) {
      HostStat fresh;
      fresh.host = host;
      fresh.port = port;
      fresh.first_line = line;
      hosts.push_back(std::move(fresh));
    }
    HostStat& h = hosts[it->second];
    h.connections += connections;
    h.bytes_up += up;
    h.bytes_down += down;
    h.first_line = std::min(h.first_line, line);
    for (const auto& reason : reasons)
      if (!reason.empty() && std::find(h.reasons.begin(), h.reasons.end(), reason) == h.reasons.end())
        h.reasons.push_back(reason);
  }
  void add(const std::string& host, std::uint64_t port, std::uint64_t up, std::uint64_t down,
           const std::string& reason, std::uint64_t line) {
    add(host, port, 1, up, down, {reason}, line);
  }

  Json to_json() const {
    std::vector<const HostStat*> ordered;
    for (const auto& h : hosts) ordered.push_back(&h);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const HostStat* a, const HostStat* b) { return a->first_line < b->first_line; });
    Json out = Json::array();
    for (const HostStat* p : ordered) {
      const HostStat& h = *p;
      out.push_back(Json{{"host", h.host},
                         {"port", h.port},
                         {"connections", h.connections},
                         {"bytes_up", h.bytes_up},
                         {"bytes_down", h.bytes_down},
                         {"reasons", h.reasons}});
    }
    return out;
  }
};

// The proxy refuses a request that lacks the run's password (407), or comes
// while the run is paused, before it reads the request's target: such a line
// names the target as the client wrote it ("github.com:443", port 0). Split
// here, so it is grouped with the other requests for the same host and port.
Target split_target(const std::string& host, std::uint64_t port, bool connect) {
  if (port != 0 || host.empty()) return {host, port};
  const auto colon = host.rfind(':');
  const bool bracketed = host.front() == '[';
  if (colon != std::string::npos && (!bracketed || host[colon - 1] == ']') &&
      (bracketed || host.find(':') == colon)) {
    if (const auto p = parse_port(std::string_view(host).substr(colon + 1)))
      return {host.substr(0, colon), *p};
  }
  // An absolute-form request names no port for http://'s own.
  return {host, connect ? 0 : 80};
}

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
  // A request without the run's password gets the 407 challenge, which clients
  // (git, Codex) answer by asking again with it: a challenge is a refusal only
  // when no request for the same host and port got past the password.
  Group challenged;
  std::set<Target> authenticated;
  std::uint64_t line = 0;
  const auto read = read_json_lines(log, [&](const nlohmann::json& j) {
    if (!j.contains("host") || !j["host"].is_string() || !j.contains("verdict") || !j["verdict"].is_string())
      return false;
    const std::string named = j["host"].get<std::string>();
    const std::string verdict = j["verdict"].get<std::string>();
    const std::string reason =
        j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "";
    const std::uint64_t up = number_or_zero(j, "bytes_up"), down = number_or_zero(j, "bytes_down");
    // A DNS answer is not a connection: only the run's refused questions are
    // listed (as refused, "host:53"); the connections that followed are.
    const bool dns = j.contains("method") && j["method"] == "DNS";
    if (dns && verdict != "denied") return true;
    const auto [host, port] = dns ? Target{named, number_or_zero(j, "port")}
                                  : split_target(named, number_or_zero(j, "port"),
                                                 j.contains("method") && j["method"] == "CONNECT");
    ++line;
    const bool before_password =
        reason == proxy::reason::auth_required || reason == proxy::reason::auth_failed || verdict == "paused";
    if (!dns && !before_password) authenticated.insert({host, port});
    if (!dns && reason == proxy::reason::auth_required)
      challenged.add(host, port, up, down, reason, line);
    else if (verdict == "allowed")
      reached.add(host, port, up, down, reason, line);
    else if (verdict == "failed")
      failed.add(host, port, up, down, reason, line);
    else
      refused.add(host, port, up, down,
                  dns                   ? "dns: " + reason
                  : verdict == "denied" ? reason
                                        : verdict + (reason.empty() ? "" : ": " + reason),
                  line);
    return true;
  });
  for (const auto& c : challenged.hosts)
    if (authenticated.count({c.host, c.port}) == 0)
      refused.add(c.host, c.port, c.connections, c.bytes_up, c.bytes_down, c.reasons, c.first_line);
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
