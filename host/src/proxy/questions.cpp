// The rule as it stands while the run goes on: the live changes over the
// run's own rule, and ask mode's questions. All of it lives on the io thread;
// the public calls hop there (run_on_io), so a question is answered, expired
// or closed by a stop in one order, never twice.
#include <algorithm>

#include "common/clock.hpp"
#include "proxy/destination.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {

std::vector<std::uint16_t> ServerCore::ports_for(std::string_view name) const {
  return live_rules_.apply(name, allowed_ports_for(config, name), config.allowed_ports);
}

std::vector<std::uint16_t> ServerCore::capture_ports_for(std::string_view name) const {
  std::vector<std::uint16_t> ports = ports_for(name);
  if (ports.empty() && config.ask_timeout.count() > 0) return config.allowed_ports;
  return ports;
}

std::uint64_t ServerCore::ask(const std::shared_ptr<Connection>& c, const HostPort& target,
                              std::string_view rule_reason) {
  for (auto& [id, open] : questions_) {
    if (open.question.host == target.host && open.question.port == target.port) {
      if (c) open.waiting.push_back(c);
      return id;
    }
  }
  OpenQuestion open;
  Question& q = open.question;
  q.id = next_question_++;
  q.host = target.host;
  q.port = target.port;
  q.rule_reason = std::string(rule_reason);
  if (c) {
    q.client = c->client_address();
    q.server = c->server_address();
  }
  q.asked_at = iso_utc_now();
  // A run's request without ask mode still waits for an answer a while.
  q.deadline = Clock::now() + (config.ask_timeout.count() > 0 ? config.ask_timeout : kRequestWaits);
  if (c) open.waiting.push_back(c);
  const auto [it, inserted] = questions_.emplace(q.id, std::move(open));
  if (config.ask_hooks.asked) config.ask_hooks.asked(it->second.question);
  return it->first;
}

std::uint64_t ServerCore::ask_for(const HostPort& target, std::string_view why) {
  return ask(nullptr, target, why);
}

void ServerCore::close_question(std::uint64_t id, bool allow, std::string_view why, QuestionEnd end) {
  const auto it = questions_.find(id);
  if (it == questions_.end()) return;
  OpenQuestion open = std::move(it->second);
  questions_.erase(it);
  end.at = iso_utc_now();
  std::vector<std::shared_ptr<Connection>> waiting;
  for (const auto& w : open.waiting)
    if (auto c = w.lock()) waiting.push_back(std::move(c));
  end.connections = waiting.size();
  // The hooks first: the record holds the answer before the log lines of the
  // connections it let through or refused.
  if (config.ask_hooks.closed) config.ask_hooks.closed(open.question, end);
  for (const auto& c : waiting) c->answered(allow, why, end.outcome);
}

void ServerCore::expire_questions(Clock::time_point now) {
  std::vector<std::uint64_t> due;
  for (const auto& [id, open] : questions_)
    if (now >= open.question.deadline) due.push_back(id);
  for (const std::uint64_t id : due) {
    QuestionEnd end;
    end.outcome = "not-answered";
    close_question(id, false, reason::not_answered, std::move(end));
  }
}

void ServerCore::change_rule(RuleChange change) {
  run_on_io([&] { live_rules_.add(std::move(change)); });
}

std::vector<RuleChange> ServerCore::rule_changes() {
  std::vector<RuleChange> out;
  run_on_io([&] { out = live_rules_.changes(); });
  return out;
}

bool ServerCore::allows_now(const std::string& host, std::uint16_t port) {
  // The name as the proxy's intake would leave it: loopback names as they
  // are, any other checked and normalized (an address literal never passes).
  HostPort target{host, port};
  if (!is_loopback_name(host) && !check_host_name(host, target.host).ok()) return false;
  bool allowed = false;
  run_on_io(
      [&] { allowed = decide_destination(config, ports_for(target.host), target).route != Route::refuse; });
  return allowed;
}

std::vector<Question> ServerCore::questions() {
  std::vector<Question> out;
  run_on_io([&] {
    for (const auto& [id, open] : questions_) out.push_back(open.question);
  });
  return out;
}

Status ServerCore::answer(std::uint64_t id, bool allow, bool for_run, const std::string& by) {
  Status result = ok();
  run_on_io([&] {
    const auto it = questions_.find(id);
    if (it == questions_.end()) {
      result =
          Error::not_found("question " + std::to_string(id) +
                           " is not open in this run: it was answered, its time ran out, or it never was "
                           "(parallex approve lists the open ones)");
      return;
    }
    const Question& q = it->second.question;
    if (for_run) {
      // Allow exactly what was asked (the host on that port); deny the host
      // on every port, so it is not asked about again in this run.
      RuleChange change;
      change.kind = allow ? RuleChange::Kind::allow : RuleChange::Kind::deny;
      change.rule.pattern = q.host;
      if (allow) change.rule.port = q.port;
      change.by = by;
      change.at = iso_utc_now();
      live_rules_.add(std::move(change));
    }
    QuestionEnd end;
    end.outcome =
        allow ? (for_run ? "allowed-for-run" : "allowed-once") : (for_run ? "denied-for-run" : "denied");
    end.by = by;
    close_question(id, allow, reason::denied_by_user, std::move(end));
  });
  return result;
}

}  // namespace px::proxy
