#include "run/record_parts.hpp"

#include "run/events.hpp"
#include "run/json_read.hpp"

namespace px::run {

using json = nlohmann::json;
using namespace json_read;

json to_json(const KillSwitchEvent& e) {
  json j{{"op", e.op}, {"at", e.at}};
  if (e.by) j["by"] = *e.by;
  if (e.pending) j["pending"] = *e.pending;
  if (e.ms) j["ms"] = *e.ms;
  if (e.leftovers_killed) j["leftovers_killed"] = *e.leftovers_killed;
  return j;
}

KillSwitchEvent KillSwitchEvent::from_json(const json& j) {
  KillSwitchEvent e;
  e.op = str(j, "op");
  e.at = str(j, "at");
  if (auto it = j.find("by"); it != j.end() && it->is_string()) e.by = it->get<std::string>();
  if (auto it = j.find("pending"); it != j.end() && it->is_boolean()) e.pending = it->get<bool>();
  if (auto it = j.find("ms"); it != j.end() && it->is_number()) e.ms = it->get<double>();
  if (auto it = j.find("leftovers_killed"); it != j.end() && it->is_number_unsigned())
    e.leftovers_killed = it->get<std::uint64_t>();
  return e;
}

json to_json(const KillSwitchRecord& k) {
  json events = json::array();
  for (const auto& e : k.events) events.push_back(to_json(e));
  json j{{"mechanism", k.mechanism}, {"note", k.note}, {"events", events}};
  if (k.limits) j["limits"] = *k.limits;
  return j;
}

KillSwitchRecord KillSwitchRecord::from_json(const json& j) {
  KillSwitchRecord k;
  k.mechanism = str(j, "mechanism");
  k.note = str(j, "note");
  k.events = objects<KillSwitchEvent>(j, "events", KillSwitchEvent::from_json);
  if (auto it = j.find("limits"); it != j.end() && it->is_array()) k.limits = strings(j, "limits");
  return k;
}

json to_json(const AskedQuestion& q) {
  json j{{"question", q.question}, {"host", q.host},
         {"port", q.port},         {"rule_reason", q.rule_reason},
         {"asked_at", q.asked_at}, {"answered_at", q.answered_at},
         {"outcome", q.outcome},   {"connections", q.connections}};
  if (!q.by.empty()) j["by"] = q.by;
  if (!q.process.empty()) j["process"] = q.process;
  return j;
}

AskedQuestion AskedQuestion::from_json(const json& j) {
  AskedQuestion q;
  q.question = count_of(j, "question");
  q.host = str(j, "host");
  q.port = static_cast<std::uint16_t>(count_of(j, "port"));
  q.rule_reason = str(j, "rule_reason");
  q.asked_at = str(j, "asked_at");
  q.answered_at = str(j, "answered_at");
  q.outcome = str(j, "outcome");
  q.by = str(j, "by");
  q.process = str(j, "process");
  q.connections = count_of(j, "connections");
  return q;
}

json to_json(const LiveRuleChange& c) {
  return {{"change", c.change}, {"rule", c.rule}, {"by", c.by}, {"at", c.at}};
}

LiveRuleChange LiveRuleChange::from_json(const json& j) {
  return {str(j, "change"), str(j, "rule"), str(j, "by"), str(j, "at")};
}

json to_json(const NetworkLive& n) {
  json questions = json::array(), changes = json::array();
  for (const auto& q : n.questions) questions.push_back(to_json(q));
  for (const auto& c : n.rule_changes) changes.push_back(to_json(c));
  return {{"ask_seconds", n.ask_seconds}, {"questions", questions}, {"rule_changes", changes}};
}

NetworkLive NetworkLive::from_json(const json& j) {
  NetworkLive n;
  n.ask_seconds = count_of(j, "ask_seconds");
  n.questions = objects<AskedQuestion>(j, "questions", AskedQuestion::from_json);
  n.rule_changes = objects<LiveRuleChange>(j, "rule_changes", LiveRuleChange::from_json);
  return n;
}

json to_json(const OpenRequest& r) {
  // The run.open_requested event's fields and when it was asked: one list of
  // the fields, so the record and the event never say a request differently.
  json j = open_request_fields(r);
  j["at"] = r.at;
  return j;
}

OpenRequest OpenRequest::from_json(const json& j) {
  OpenRequest r;
  r.url = str(j, "url");
  r.host = str(j, "host");
  r.port = static_cast<std::uint16_t>(count_of(j, "port"));
  if (auto it = j.find("in_rule"); it != j.end() && it->is_boolean()) r.in_rule = it->get<bool>();
  r.by = str(j, "by");
  r.process = str(j, "process");
  r.at = str(j, "at");
  return r;
}

json to_json(const OpenRequests& r) {
  json requests = json::array();
  for (const auto& one : r.requests) requests.push_back(to_json(one));
  return {{"requests", requests}, {"refused", r.refused}};
}

OpenRequests OpenRequests::from_json(const json& j) {
  OpenRequests r;
  r.requests = objects<OpenRequest>(j, "requests", OpenRequest::from_json);
  r.refused = count_of(j, "refused");
  return r;
}

json to_json(const BrokerRecord& b) {
  json j{{"request_log", b.request_log.string()}};
  if (!b.reported) return j;
  json hosts = json::array(), attempts = json::array(), failures = json::array();
  for (const auto& h : b.hosts)
    hosts.push_back({{"host", h.host}, {"requests", h.requests}, {"refused", h.refused}});
  for (const auto& a : b.exfiltration)
    attempts.push_back(
        {{"credential", a.credential}, {"host", a.host}, {"where", a.where}, {"count", a.count}});
  for (const auto& f : b.failures)
    failures.push_back({{"host", f.host}, {"reason", f.reason}, {"count", f.count}});
  j["terminated"] = b.terminated;
  j["credentials"] = b.credentials;
  j["hosts"] = hosts;
  j["exfiltration"] = attempts;
  j["failures"] = failures;
  return j;
}

BrokerRecord BrokerRecord::from_json(const json& j) {
  BrokerRecord b;
  b.request_log = str(j, "request_log");
  for (const char* key : {"terminated", "credentials", "hosts", "exfiltration", "failures"})
    b.reported = b.reported || j.contains(key);
  b.terminated = strings(j, "terminated");
  b.credentials = strings(j, "credentials");
  b.hosts = objects<BrokerHost>(j, "hosts", [](const json& h) {
    return BrokerHost{str(h, "host"), count_of(h, "requests"), count_of(h, "refused")};
  });
  b.exfiltration = objects<ExfiltrationAttempt>(j, "exfiltration", [](const json& a) {
    return ExfiltrationAttempt{str(a, "credential"), str(a, "host"), str(a, "where"), count_of(a, "count")};
  });
  b.failures = objects<BrokerFailure>(j, "failures", [](const json& f) {
    return BrokerFailure{str(f, "host"), str(f, "reason"), count_of(f, "count")};
  });
  return b;
}

json to_json(const Quarantined& q) {
  json j{{"path", q.path.string()},        {"kind", q.kind}, {"why", q.why},
         {"contents", q.contents},         {"when", q.when}, {"at", q.at},
         {"moved_to", q.moved_to.string()}};
  if (!q.restored.empty()) j["restored"] = q.restored;
  if (!q.error.empty()) j["error"] = q.error;
  return j;
}

Quarantined Quarantined::from_json(const json& j) {
  Quarantined q;
  q.path = str(j, "path");
  q.kind = str(j, "kind");
  q.why = str(j, "why");
  q.contents = str(j, "contents");
  q.when = str(j, "when");
  q.at = str(j, "at");
  q.moved_to = str(j, "moved_to");
  q.restored = str(j, "restored");
  q.error = str(j, "error");
  return q;
}

json to_json(const HeldChange& c) {
  json j{{"path", c.path.string()}, {"kind", c.kind},     {"what", c.what},
         {"reason", c.reason},      {"origin", c.origin}, {"held", c.held}};
  if (!c.format.empty()) j["format"] = c.format;
  if (!c.keys.empty()) j["keys"] = c.keys;
  if (!c.landed.empty()) j["landed"] = c.landed;
  if (!c.files.empty()) j["files"] = c.files;
  if (!c.changes.empty()) j["changes"] = c.changes;
  if (!c.base_sha256.empty()) j["base_sha256"] = c.base_sha256;
  if (!c.note.empty()) j["note"] = c.note;
  if (!c.applied_at.empty()) j["applied_at"] = c.applied_at;
  return j;
}

HeldChange HeldChange::from_json(const json& j) {
  HeldChange c;
  c.path = str(j, "path");
  c.kind = j.contains("kind") ? str(j, "kind") : "file";
  c.what = str(j, "what");
  c.format = str(j, "format");
  c.keys = strings(j, "keys");
  c.landed = strings(j, "landed");
  c.files = strings(j, "files");
  c.reason = str(j, "reason");
  c.origin = str(j, "origin");
  c.held = str(j, "held");
  c.changes = str(j, "changes");
  c.base_sha256 = str(j, "base_sha256");
  c.note = str(j, "note");
  c.applied_at = str(j, "applied_at");
  return c;
}

std::optional<GitRefs> git_refs_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  GitRefs refs;
  for (const auto& [name, oid] : j.items())
    if (oid.is_string()) refs[name] = oid.get<std::string>();
  return refs;
}

}  // namespace px::run
