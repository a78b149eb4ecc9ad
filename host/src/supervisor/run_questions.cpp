#include "supervisor/run_questions.hpp"

#include <cstdlib>
#include <thread>

#include "common/clock.hpp"
#include "common/host_rule.hpp"
#include "common/logging.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/spawn.hpp"
#include "killswitch/proc.hpp"

namespace px::supervisor {
namespace {

run::LiveRuleChange change_of(const proxy::RuleChange& c) {
  return {std::string(proxy::to_string(c.kind)), c.rule.text(), c.by, c.at};
}
nlohmann::json change_json(const proxy::RuleChange& c) {
  return run::to_json(change_of(c));
}

}  // namespace

RunQuestions::RunQuestions(RunQuestionsOptions options) : options_(std::move(options)) {}
RunQuestions::~RunQuestions() = default;

proxy::AskHooks RunQuestions::hooks() {
  proxy::AskHooks h;
  h.asked = [this](const proxy::Question& q) {
    if (options_.events)
      options_.events->emit(run::event::network_asked, {{"question", q.id},
                                                        {"host", q.host},
                                                        {"port", q.port},
                                                        {"reason", q.rule_reason},
                                                        {"seconds", options_.ask.count()}});
    notify(q);
  };
  h.closed = [this](const proxy::Question& q, const proxy::QuestionEnd& end) {
    std::lock_guard lock(mu_);
    std::string outcome = end.outcome;
    if (const auto it = scope_.find(q.id); it != scope_.end() && outcome == "allowed-for-run")
      outcome = "allowed-always";
    run::AskedQuestion j;
    j.question = q.id;
    j.host = q.host;
    j.port = q.port;
    j.rule_reason = q.rule_reason;
    j.asked_at = q.asked_at;
    j.outcome = outcome;
    j.answered_at = end.at;
    j.connections = end.connections;
    j.by = end.by;
    if (const auto it = asked_by_.find(q.id); it != asked_by_.end()) j.process = it->second;
    if (options_.events) {
      nlohmann::ordered_json fields{{"question", j.question},
                                    {"host", j.host},
                                    {"port", j.port},
                                    {"answer", j.outcome},
                                    {"connections", j.connections}};
      if (!j.by.empty()) fields["by"] = j.by;
      options_.events->emit(run::event::network_answered, fields);
      // An answer for the run (or always) is a rule change too.
      if (j.outcome == "allowed-for-run" || j.outcome == "allowed-always")
        options_.events->emit(
            run::event::rule_changed,
            {{"change", "allow"}, {"rule", j.host + ":" + std::to_string(j.port)}, {"by", j.by}});
      else if (j.outcome == "denied-for-run")
        options_.events->emit(run::event::rule_changed, {{"change", "deny"}, {"rule", j.host}, {"by", j.by}});
    }
    closed_.push_back(std::move(j));
    asked_by_.erase(q.id);
    scope_.erase(q.id);
  };
  return h;
}

void RunQuestions::attach(proxy::ProxyServer* proxy, std::function<std::vector<pid_t>()> processes) {
  proxy::ProxyServer* before = nullptr;
  {
    std::lock_guard lock(mu_);
    before = proxy_;
  }
  // Detached: the changes made so far stay for the record (the proxy goes).
  std::vector<proxy::RuleChange> changes;
  if (before && !proxy) changes = before->rule_changes();
  std::lock_guard lock(mu_);
  if (before && !proxy)
    for (const auto& c : changes) changes_.push_back(change_of(c));
  proxy_ = proxy;
  processes_ = std::move(processes);
}

void RunQuestions::notify(const proxy::Question& q) {
  // On the proxy's io thread: the notification is spawned and waited for on
  // a thread of its own. Only where a desktop session is there to show it.
  if (!options_.desktop_notifications || !std::getenv("DBUS_SESSION_BUS_ADDRESS")) return;
  const char* path = std::getenv("PATH");
  const auto found = find_executable("notify-send", path ? path : "/usr/bin:/bin");
  if (!found) return;
  const std::string exe = found->string();
  const std::string title =
      "parallex: run " + options_.run_id + (options_.agent.empty() ? "" : " (" + options_.agent + ")");
  const std::string body = "asks to reach " + q.host + ":" + std::to_string(q.port) +
                           ". Answer: parallex approve " + std::to_string(q.id) + " --run " +
                           options_.run_id + " (or parallex deny " + std::to_string(q.id) + " --run " +
                           options_.run_id + ")";
  std::thread([exe, title, body] {
    SpawnSpec spec;
    spec.argv = {exe, "--app-name=parallex", title, body};
    if (auto pid = spawn_process(spec); pid) wait_exit_status(pid.value());
  }).detach();
}

nlohmann::json RunQuestions::describe(const proxy::Question& q) {
  nlohmann::json j{{"question", q.id},
                   {"host", q.host},
                   {"port", q.port},
                   {"rule_reason", q.rule_reason},
                   {"asked_at", q.asked_at}};
  std::string& who = asked_by_[q.id];
  if (who.empty() && processes_ && !q.client.empty()) {
    const std::vector<pid_t> run = processes_();
    if (!run.empty())
      if (const pid_t pid = killswitch::tcp_socket_owner(run, q.client, q.server); pid > 0)
        who = redact(killswitch::describe_process(pid));
  }
  if (!who.empty()) j["process"] = who;
  const auto left =
      std::chrono::duration_cast<std::chrono::seconds>(q.deadline - std::chrono::steady_clock::now());
  j["seconds_left"] = std::max<std::int64_t>(0, left.count());
  return j;
}

std::optional<nlohmann::json> RunQuestions::handle(const nlohmann::json& request, const std::string& by) {
  const std::string op = request.value("op", "");
  if (op != "questions" && op != "answer" && op != "allow" && op != "deny" && op != "rules")
    return std::nullopt;
  proxy::ProxyServer* proxy = nullptr;
  {
    std::lock_guard lock(mu_);
    proxy = proxy_;
  }
  if (!proxy)
    return nlohmann::json{{"ok", false}, {"error", "this run has no network of its own yet (or any more)"}};
  if (op == "questions") {
    nlohmann::json list = nlohmann::json::array();
    const auto open = proxy->questions();  // not under mu_: it waits for the io thread
    std::lock_guard lock(mu_);
    for (const auto& q : open) list.push_back(describe(q));
    return nlohmann::json{{"ok", true}, {"ask_seconds", options_.ask.count()}, {"questions", list}};
  }
  if (op == "answer") return answer(request, by);
  if (op == "allow" || op == "deny") return change_rule(request, op == "allow", by);
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : proxy->rule_changes()) changes.push_back(change_json(c));
  return nlohmann::json{{"ok", true}, {"rule_changes", changes}};
}

nlohmann::json RunQuestions::answer(const nlohmann::json& request, const std::string& by) {
  if (!request.contains("question") || !request["question"].is_number_unsigned())
    return {{"ok", false}, {"error", "say which question: {\"question\": N}"}};
  const std::uint64_t id = request["question"].get<std::uint64_t>();
  const bool allow = request.value("allow", false);
  const std::string scope = request.value("for", "once");
  if (scope != "once" && scope != "run" && scope != "always")
    return {{"ok", false}, {"error", "'" + scope + "' is not how long an answer holds: once, run or always"}};
  if (scope == "always" && options_.agent.empty())
    return {
        {"ok", false},
        {"error",
         "run " + options_.run_id +
             " is not an agent's: answer --for run (or once); \"always\" is written to an agent's rules"}};
  if (scope == "always" && !allow)
    return {{"ok", false}, {"error", "\"always\" is for an allow; a deny holds --for run (or once)"}};
  proxy::ProxyServer* proxy = nullptr;
  {
    std::lock_guard lock(mu_);
    proxy = proxy_;
    if (scope == "always") scope_[id] = scope;
  }
  std::string rule;  // what "for run" and "always" allow: the host on the port asked for
  for (const auto& q : proxy->questions())
    if (q.id == id) rule = q.host + ":" + std::to_string(q.port);
  const Status done = proxy->answer(id, allow, scope != "once", by);
  if (!done) {
    std::lock_guard lock(mu_);
    scope_.erase(id);
    return {{"ok", false}, {"error", done.error().message}};
  }
  return {{"ok", true},   {"question", id},          {"allow", allow},
          {"for", scope}, {"agent", options_.agent}, {"rule", rule}};
}

nlohmann::json RunQuestions::change_rule(const nlohmann::json& request, bool allow, const std::string& by) {
  const std::string text = request.value("rule", "");
  auto rule = parse_host_rule(text);
  if (!rule) return {{"ok", false}, {"error", rule.error().message}};
  proxy::RuleChange change;
  change.kind = allow ? proxy::RuleChange::Kind::allow : proxy::RuleChange::Kind::deny;
  change.rule = std::move(rule).value();
  change.by = by;
  change.at = iso_utc_now();
  proxy::ProxyServer* proxy = nullptr;
  {
    std::lock_guard lock(mu_);
    proxy = proxy_;
  }
  const nlohmann::json j = change_json(change);
  if (options_.events)
    options_.events->emit(run::event::rule_changed,
                          {{"change", j.value("change", "")}, {"rule", j.value("rule", "")}, {"by", by}});
  proxy->change_rule(std::move(change));
  return {{"ok", true}, {"change", j}};
}

std::optional<run::NetworkLive> RunQuestions::record() const {
  proxy::ProxyServer* proxy = nullptr;
  {
    std::lock_guard lock(mu_);
    proxy = proxy_;
  }
  // The proxy's calls wait for its io thread, whose hooks take mu_.
  std::vector<proxy::RuleChange> live;
  if (proxy) live = proxy->rule_changes();
  std::lock_guard lock(mu_);
  run::NetworkLive n;
  n.ask_seconds = static_cast<std::uint64_t>(options_.ask.count());
  n.questions = closed_;
  n.rule_changes = changes_;
  for (const auto& c : live) n.rule_changes.push_back(change_of(c));  // still attached: the run goes on
  if (n.ask_seconds == 0 && n.questions.empty() && n.rule_changes.empty()) return std::nullopt;
  return n;
}

}  // namespace px::supervisor
