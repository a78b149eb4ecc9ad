// The run's network, decided with the user (docs/ask.md):
//   inside a run   recent_refusals (what this run was refused, with the fix)
//                  and request_access (asks the user for a host; grants nothing),
//                  both through the run's own service behind its proxy
//                  (http://parallex.invalid/, proxy/run_service.cpp);
//   outside runs   run_questions, answer_question and change_run_rule: what
//                  `parallex approve`, `deny` and `allow --run` do. Refused
//                  inside a run: a run never answers its own question.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/base64.hpp"
#include "common/paths.hpp"
#include "common/unique_fd.hpp"
#include "killswitch/network_client.hpp"
#include "mcp/tools.hpp"

namespace px::mcp {
namespace {

// One request to the run's service through the run's proxy (HTTP_PROXY:
// http://USER:PASSWORD@127.0.0.1:PORT, as every run gets it).
Result<Json> ask_run_service(const std::string& method, const std::string& target) {
  const char* proxy = std::getenv("HTTP_PROXY");
  const std::string url = proxy ? proxy : "";
  const auto scheme = url.find("://");
  const auto at = url.rfind('@');
  const auto colon = url.rfind(':');
  if (scheme == std::string::npos || at == std::string::npos || colon == std::string::npos || colon < at)
    return Error::not_found("this run has no proxy of its own (an offline run, or HTTP_PROXY was changed)");
  const std::string credentials = url.substr(scheme + 3, at - scheme - 3);
  const std::string host = url.substr(at + 1, colon - at - 1);
  const int port = std::atoi(url.c_str() + colon + 1);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1 || port <= 0)
    return Error::invalid("HTTP_PROXY does not name the run's proxy on 127.0.0.1");
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
    return Error::io("connect to the run's proxy", errno);
  const std::string request = method + " http://parallex.invalid" + target +
                              " HTTP/1.1\r\nHost: parallex.invalid\r\nProxy-Authorization: Basic " +
                              base64_encode(credentials) +
                              "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
    return Error::io("write to the run's proxy", errno);
  std::string answer;
  char buf[8192];
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 10000) != 1) return Error::conflict("the run's proxy did not answer within 10 s");
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
    if (answer.size() > (1 << 20)) break;
  }
  const auto body = answer.find("\r\n\r\n");
  if (body == std::string::npos) return Error::io("read the run's proxy's answer", EPROTO);
  Json j = Json::parse(answer.substr(body + 4), nullptr, false);
  if (j.is_discarded()) return Error::invalid("the run's service answered something that is not JSON");
  return j;
}

ToolResult structured(Json j, std::string message = {}) {
  ToolResult r;
  r.structured = std::move(j);
  r.message = std::move(message);
  return r;
}

ToolResult recent_refusals(ToolContext& ctx, const Json&) {
  if (!ctx.run().inside_run)
    return tool_error(
        "recent_refusals answers inside a run, about that run; outside, `parallex report` and "
        "`parallex events` tell what runs were refused.");
  auto j = ask_run_service("GET", "/v1/refusals");
  if (!j) return tool_error(j.error());
  return structured(std::move(j).value());
}

ToolResult request_access(ToolContext& ctx, const Json& args) {
  if (!ctx.run().inside_run)
    return tool_error(
        "request_access asks the user from inside a run; outside, answer_question and "
        "change_run_rule decide.");
  const std::string host = args.value("host", "");
  const int port = args.value("port", 443);
  auto j = ask_run_service("POST", "/v1/requests?host=" + host + "&port=" + std::to_string(port));
  if (!j) return tool_error(j.error());
  if (j.value().contains("error")) return tool_error(j.value().value("error", ""));
  return structured(std::move(j).value());
}

std::optional<ToolResult> refuse_inside(ToolContext& ctx) {
  if (ctx.run().inside_run)
    return tool_error("This server runs inside run " + ctx.run().run_id +
                      ": a run does not answer questions or change rules; request_access asks the user.");
  return std::nullopt;
}

ToolResult run_questions(ToolContext& ctx, const Json& args) {
  if (auto refused = refuse_inside(ctx)) return *refused;
  auto open = killswitch::open_questions(parallex_runtime_dir(), args.value("run", ""));
  if (!open) return tool_error(open.error());
  Json list = Json::array();
  for (const auto& q : open.value()) {
    Json row = q.question;
    row["run"] = q.run.id;
    row["agent"] = q.run.agent;
    list.push_back(std::move(row));
  }
  return structured({{"questions", list}});
}

ToolResult answer_question(ToolContext& ctx, const Json& args) {
  if (auto refused = refuse_inside(ctx)) return *refused;
  const std::string scope = args.value("for", "once");
  if (scope == "always")
    return tool_error(
        "\"always\" writes to an agent's rules: answer --for always with `parallex approve` in a "
        "terminal; here once or run.");
  auto done = killswitch::answer_question(
      parallex_runtime_dir(), args.value("run", ""), args.value("question", std::uint64_t{0}),
      args.value("allow", false), scope, "parallex mcp (answer_question)");
  if (!done) return tool_error(done.error());
  Json j = done.value().reply;
  j["run"] = done.value().run.id;
  j.erase("ok");
  return structured(std::move(j));
}

ToolResult change_run_rule(ToolContext& ctx, const Json& args) {
  if (auto refused = refuse_inside(ctx)) return *refused;
  const bool allow = args.value("allow", false);
  auto done = killswitch::change_run_rule(parallex_runtime_dir(), args.value("run", ""), allow,
                                          args.value("rule", ""), "parallex mcp (change_run_rule)");
  if (!done) return tool_error(done.error());
  return structured(
      {{"run", done.value().run.id}, {"change", done.value().reply.value("change", Json::object())}});
}

Json text(const char* description) {
  return {{"type", "string"}, {"description", description}};
}

}  // namespace

void add_network_tools(std::vector<Tool>& tools) {
  const Json any = Json{{"type", "object"}};
  tools.push_back(Tool{"recent_refusals", "What this run was refused",
                       "Inside a Parallex run: the network refusals of this run so far (host, port, reason, "
                       "count) with how the user could allow each. Tell the user instead of retrying.",
                       object_schema(Json::object()), any, true, false, false, recent_refusals});
  tools.push_back(
      Tool{"request_access", "Ask the user for a host",
           "Inside a Parallex run: asks the user to allow HOST (and PORT, default 443) for this run. "
           "It grants nothing: the user answers outside the run (parallex approve).",
           object_schema({{"host", text("A plain host name, e.g. api.example.com")},
                          {"port", {{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}}}},
                         {"host"}),
           any, false, false, true, request_access});
  tools.push_back(
      Tool{"run_questions", "Open questions of running runs",
           "Outside runs: the questions runs in ask mode are waiting on (run, agent, host:port, the "
           "process that asked, seconds left).",
           object_schema({{"run", text("A run id (or its start) or an agent; default every run")}}), any,
           true, false, false, run_questions});
  tools.push_back(
      Tool{"answer_question", "Answer a run's question",
           "Outside runs: allow or deny a question of a run in ask mode, once or for the rest of the "
           "run.",
           object_schema({{"question", {{"type", "integer"}, {"minimum", 1}}},
                          {"allow", {{"type", "boolean"}}},
                          {"for", {{"type", "string"}, {"enum", {"once", "run"}}}},
                          {"run", text("The run, when two runs ask a question of that number")}},
                         {"question", "allow"}),
           any, false, false, false, answer_question});
  tools.push_back(
      Tool{"change_run_rule", "Allow or deny a host in a running run",
           "Outside runs: changes a running run's network rule at once (HOST, HOST:PORT or *.HOST).",
           object_schema({{"run", text("The run id (or its start) or its agent")},
                          {"rule", text("HOST, HOST:PORT or *.HOST")},
                          {"allow", {{"type", "boolean"}}}},
                         {"run", "rule", "allow"}),
           any, false, true, false, change_run_rule});
}

}  // namespace px::mcp
