// GET /api/questions, POST /api/questions/{n}, POST /api/runs/{id}/allow|deny:
// `parallex approve [--json]`, `approve|deny N`, `allow|deny --run ID HOST`
// (run/network_decisions.hpp).
#include <unistd.h>

#include "run/network_decisions.hpp"
#include "ui/api.hpp"

namespace px::ui {
namespace {

std::string by_ui(const char* verb) {
  return std::string("parallex ui ") + verb + " (uid " + std::to_string(::getuid()) + ")";
}

std::string string_field(const nlohmann::json& body, const char* key, const std::string& fallback = "") {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw std::invalid_argument(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

ApiAnswer api_questions(const ApiParams&, const nlohmann::json&) {
  auto listed = run::open_questions_json();
  if (!listed) return api_error(listed.error());
  return {200, listed.value()};
}

ApiAnswer api_answer(const ApiParams& p, const nlohmann::json& body) {
  const std::string& n = p.at("n");
  if (n.empty() || n.size() > 12 || n.find_first_not_of("0123456789") != std::string::npos)
    return api_error(
        Error::invalid("question " + n + ": give a question's number (GET /api/questions lists them)"));
  const std::string answer = string_field(body, "answer");
  if (answer != "approve" && answer != "deny")
    return api_error(Error::invalid("\"answer\" must be \"approve\" or \"deny\""));
  std::vector<std::string> said;
  const bool allow = answer == "approve";
  auto done =
      run::answer_question_json(string_field(body, "run"), std::stoull(n), allow,
                                string_field(body, "for", "once"), by_ui(allow ? "approve" : "deny"), said);
  if (!done) return api_error(done.error());
  nlohmann::json j = done.value();
  j["ok"] = true;
  if (!said.empty()) j["notes"] = said;
  return {200, j};
}

ApiAnswer api_run_rule(const ApiParams& p, const nlohmann::json& body, bool allow) {
  const std::string host = string_field(body, "host");
  if (host.empty())
    return api_error(Error::invalid(std::string("name a host: {\"host\": \"HOST[:PORT]\"} (as `parallex ") +
                                    (allow ? "allow" : "deny") + " --run " + p.at("id") + " HOST`)"));
  std::string run_id;
  auto done = run::change_run_rule_json(run_id, p.at("id"), allow, host, by_ui(allow ? "allow" : "deny"));
  if (!done) return run_gone_or(done.error(), p.at("id"), allow ? "allow a host in" : "deny a host in");
  return {200, {{"ok", true}, {"run", run_id}, {"changes", nlohmann::json::array({done.value()})}}};
}

}  // namespace

std::vector<ApiRoute> api_decisions_routes() {
  return {
      {"GET", "/api/questions", api_questions},
      {"POST", "/api/questions/{n}", api_answer},
      {"POST", "/api/runs/{id}/allow",
       [](const ApiParams& p, const nlohmann::json& b) { return api_run_rule(p, b, true); }},
      {"POST", "/api/runs/{id}/deny",
       [](const ApiParams& p, const nlohmann::json& b) { return api_run_rule(p, b, false); }},
  };
}

}  // namespace px::ui
