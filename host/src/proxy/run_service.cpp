// The run's own service at http://parallex.invalid/ (a name that can exist
// nowhere: .invalid is reserved), answered by the proxy itself to the run's
// programs that know the run's proxy password — so a harness can tell its
// model why something was refused, and ask for a host, instead of retrying:
//   GET  /v1/refusals                      what this run was refused, with the fix
//   POST /v1/requests?host=HOST&port=PORT  a question for the user (ask mode's)
// It speaks of this run only (the proxy is the run's own) and grants nothing:
// a request becomes a question the user answers outside the run
// (`parallex approve`), which the control socket refuses to a run.
#include <nlohmann/json.hpp>

#include "common/host_rule.hpp"
#include "common/port.hpp"
#include "proxy/connection.hpp"
#include "proxy/http_status.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace {

constexpr std::string_view kServiceHost = "parallex.invalid";

// "a=1&b=2" -> the value of `key`, as written (hosts and ports need no escapes).
std::string query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == key && eq != std::string_view::npos) return std::string(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
}

std::string json_response(int status, const nlohmann::json& body) {
  const std::string text = body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_text(status)) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(text.size()) +
         "\r\nConnection: close\r\n\r\n" + text;
}

}  // namespace

bool Connection::names_run_service(const HostPort& endpoint) {
  return endpoint.host == kServiceHost;
}

void Connection::serve_run_service() {
  const std::string& target = target_.path;
  const auto q = target.find('?');
  const std::string path = target.substr(0, q);
  const std::string query = q == std::string::npos ? std::string() : target.substr(q + 1);
  const std::string& run = server_.config.run_id;
  const std::string allow_cmd = "parallex allow --run " + (run.empty() ? std::string("<run>") : run) + " ";
  decision_.verdict = "allowed";
  decision_.reason = reason::run_service;
  int status = 200;
  nlohmann::json body;
  if (path == "/v1/refusals" && request_.method == "GET") {
    nlohmann::json refusals = nlohmann::json::array();
    for (const auto& r : server_.refused_hosts()) {
      nlohmann::json j{
          {"host", r.host}, {"port", r.port}, {"reason", r.reason}, {"count", r.count}, {"dns", r.dns}};
      if (!r.host.empty() && (r.reason == reason::not_allowed || r.reason == reason::port_not_allowed ||
                              r.reason == reason::offline || r.reason == reason::not_answered))
        j["fix"] =
            "the user can allow it: " + allow_cmd + r.host + (r.dns ? "" : ":" + std::to_string(r.port));
      refusals.push_back(std::move(j));
    }
    body = {
        {"run", run},
        {"refusals", refusals},
        {"note", "network refusals of this run so far; POST /v1/requests?host=HOST&port=PORT asks the user"}};
  } else if (path == "/v1/requests" && request_.method == "POST") {
    HostPort asked;
    const std::string host = query_value(query, "host");
    const std::string port = query_value(query, "port");
    const Verdict v = check_host_name(host, asked.host);
    const auto p = port.empty() ? std::optional<std::uint16_t>(443) : parse_port(port);
    if (!v.ok() || is_loopback_name(asked.host) || !p) {
      status = 400;
      body = {{"error", "give host=NAME (a plain host name, not an address) and port=1..65535"}};
    } else {
      asked.port = *p;
      if (!server_.ports_for(asked.host).empty() &&
          decide_destination(server_.config, server_.ports_for(asked.host), asked).route != Route::refuse) {
        body = {{"status", "allowed"}, {"host", asked.host}, {"port", asked.port}};
      } else {
        const std::uint64_t id = server_.ask_for(asked, reason::not_allowed);
        status = 202;
        body = {{"status", "asked"},
                {"question", id},
                {"host", asked.host},
                {"port", asked.port},
                {"note", "the user is asked (parallex approve " + std::to_string(id) + " --run " + run +
                             "); this run cannot answer it. Try the host again once allowed."}};
      }
    }
  } else {
    status = 404;
    body = {{"error", "GET /v1/refusals, or POST /v1/requests?host=HOST&port=PORT"}};
  }
  decision_.status = status;
  log_once({});
  send_final(json_response(status, body));
}

}  // namespace px::proxy
