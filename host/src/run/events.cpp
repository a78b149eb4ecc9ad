#include "run/events.hpp"

#include <algorithm>

#include "common/clock.hpp"

namespace px::run {

using ojson = nlohmann::ordered_json;

namespace {

// A string field of a log line, "" when absent or not a string.
std::string text_of(const nlohmann::json& line, const char* key) {
  const auto it = line.find(key);
  return it != line.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Copies the fields named in `keys` that `line` has, under the same names.
void copy_fields(const nlohmann::json& line, std::initializer_list<const char*> keys, ojson& out) {
  for (const char* k : keys)
    if (const auto it = line.find(k); it != line.end() && !it->is_null()) out[k] = *it;
}

}  // namespace

ojson event_line(const std::string& time, const std::string& run, const std::string& agent,
                 std::string_view type, const ojson& fields) {
  ojson j;
  j["v"] = kEventSchema;
  j["time"] = time;
  j["run"] = run;
  if (!agent.empty()) j["agent"] = agent;
  j["type"] = type;
  if (fields.is_object())
    for (const auto& [k, v] : fields.items())
      if (k != "v" && k != "time" && k != "run" && k != "agent" && k != "type") j[k] = v;
  return j;
}

Result<EventLog> EventLog::open(const fs::path& run_dir, std::string run_id, std::string agent) {
  PX_TRY_ASSIGN(auto file, JsonLinesWriter::open(run_dir / kEventsFile, "the run's events"));
  EventLog log;
  log.file_ = std::move(file);
  log.run_ = std::move(run_id);
  log.agent_ = std::move(agent);
  return log;
}

void EventLog::emit(std::string_view type, const ojson& fields) const {
  emit_at(iso_utc_now(), type, fields);
}

void EventLog::emit_at(const std::string& time, std::string_view type, const ojson& fields) const {
  if (!file_) return;
  file_.append(event_line(time, run_, agent_, type, fields));
}

ojson run_start_fields(const RunRecord& r) {
  ojson j;
  j["command"] = r.command;
  if (!r.harness.empty()) j["harness"] = r.harness;
  j["folder"] = r.run_folder.string();
  j["seal"] = to_string(r.seal);
  j["network"] = r.network;
  j["policy_digest"] = r.policy_digest;
  j["supervisor_pid"] = r.supervisor_pid;
  return j;
}

ojson run_end_fields(const RunRecord& r) {
  ojson j;
  j["status"] = to_string(r.status);
  if (r.exit_code) j["exit_code"] = *r.exit_code;
  if (r.signal) j["signal"] = *r.signal;
  if (r.exit_status) j["exit_status"] = *r.exit_status;
  if (!r.setup_error.empty()) j["error"] = r.setup_error;
  if (!r.end_known) j["end_known"] = false;
  return j;
}

ojson seal_refusal_fields(const SealRefusal& s) {
  return ojson{{"source", s.source}, {"call", s.call}, {"process", s.process}, {"count", s.count}};
}

ojson decoy_fields(const DecoyHit& hit) {
  ojson j{{"path", hit.path.string()}, {"access", hit.event}};
  if (hit.pid) j["pid"] = hit.pid;
  if (!hit.process.empty()) j["process"] = hit.process;
  return j;
}

ojson moved_aside_fields(const Quarantined& q) {
  ojson j{{"path", q.path.string()}, {"kind", q.kind}, {"why", q.why}, {"when", q.when}};
  if (!q.moved_to.empty()) j["moved_to"] = q.moved_to.string();
  if (!q.restored.empty()) j["restored"] = q.restored;
  if (!q.error.empty()) j["error"] = q.error;
  return j;
}

ojson open_request_fields(const OpenRequest& r) {
  ojson j{{"url", r.url}};
  if (!r.host.empty()) {
    j["host"] = r.host;
    j["port"] = r.port;
  }
  if (r.in_rule) j["in_rule"] = *r.in_rule;
  if (!r.by.empty()) j["by"] = r.by;
  if (!r.process.empty()) j["process"] = r.process;
  return j;
}

std::optional<std::string_view> kill_switch_type(const nlohmann::json& op) {
  const std::string name = text_of(op, "op");
  if (name == "pause") return event::run_paused;
  if (name == "resume") return event::run_resumed;
  if (name == "kill") return event::run_killed;
  if (name == "end") return event::leftovers_killed;
  return std::nullopt;
}

ojson kill_switch_fields(const nlohmann::json& op) {
  ojson j;
  copy_fields(op, {"by", "pending", "ms", "leftovers_killed"}, j);
  return j;
}

std::optional<ojson> event_from_proxy_line(const nlohmann::json& line, const std::string& run,
                                           const std::string& agent) {
  const std::string time = text_of(line, "time"), verdict = text_of(line, "verdict");
  if (time.empty() || verdict.empty() || !line.contains("host")) return std::nullopt;
  const std::string reason = text_of(line, "reason");
  std::string_view type = event::network_allowed;
  if (verdict == "denied" || verdict == "paused")
    type = reason == "credential-exfiltration" ? event::exfiltration_refused : event::network_refused;
  else if (verdict == "failed")
    type = event::network_failed;
  else if (verdict != "allowed")
    return std::nullopt;
  ojson f;
  copy_fields(line, {"method", "host", "port", "reason", "status", "address", "closed", "inspected"}, f);
  // The proxy's "type" is the DNS question's; "type" is the event's here.
  if (const auto it = line.find("type"); it != line.end()) f["dns_type"] = *it;
  copy_fields(line, {"rcode", "question", "answer", "bytes_up", "bytes_down", "duration_ms"}, f);
  f["source"] = "proxy";
  return event_line(time, run, agent, type, f);
}

std::optional<ojson> event_from_request_line(const nlohmann::json& line, const std::string& run,
                                             const std::string& agent) {
  const std::string time = text_of(line, "time"), verdict = text_of(line, "verdict");
  if (time.empty() || verdict.empty() || !line.contains("host")) return std::nullopt;
  const std::string reason = text_of(line, "reason");
  std::string_view type;
  if (verdict == "allowed")
    type = text_of(line, "credentials").empty() ? event::request_allowed : event::credential_swapped;
  else if (verdict == "denied")
    type = reason == "credential-exfiltration" ? event::exfiltration_refused : event::request_refused;
  else if (verdict == "failed")
    type = event::request_failed;
  else
    return std::nullopt;
  ojson f;
  copy_fields(line,
              {"method", "host", "port", "path", "status", "reason", "rule", "credentials", "detail",
               "bytes_up", "bytes_down", "duration_ms"},
              f);
  f["source"] = "broker";
  return event_line(time, run, agent, type, f);
}

std::int64_t event_time_ms(const ojson& event) {
  const auto it = event.find("time");
  if (it == event.end() || !it->is_string()) return 0;
  return parse_iso_ms(it->get<std::string>()).value_or(0);
}

std::optional<ojson> event_from_event_line(const nlohmann::json& line) {
  const auto v = line.find("v");
  if (v == line.end() || !v->is_number_integer() || v->get<int>() != kEventSchema) return std::nullopt;
  if (text_of(line, "time").empty() || text_of(line, "type").empty() || text_of(line, "run").empty())
    return std::nullopt;
  return ojson(line);
}

std::vector<ojson> events_of_old_record(const RunRecord& r) {
  std::vector<ojson> out;
  if (r.started_at.empty()) return out;
  out.push_back(event_line(r.started_at, r.id, r.agent, event::run_start, run_start_fields(r)));
  if (r.kill_switch)
    for (const auto& e : r.kill_switch->events) {
      const nlohmann::json op = to_json(e);
      if (const auto type = kill_switch_type(op); type && !e.at.empty())
        out.push_back(event_line(e.at, r.id, r.agent, *type, kill_switch_fields(op)));
    }
  if (r.open_requests)
    for (const auto& o : r.open_requests->requests)
      out.push_back(event_line(o.at.empty() ? r.started_at : o.at, r.id, r.agent, event::open_requested,
                               open_request_fields(o)));
  for (const auto& hit : r.decoy_hits)
    out.push_back(event_line(hit.at.empty() ? r.started_at : hit.at, r.id, r.agent, event::decoy_touched,
                             decoy_fields(hit)));
  if (!r.ended_at) return out;
  for (const auto& q : r.quarantined)
    out.push_back(event_line(q.at.empty() ? *r.ended_at : q.at, r.id, r.agent, event::file_moved_aside,
                             moved_aside_fields(q)));
  if (r.seal_refusals)
    for (const auto& s : r.seal_refusals->refused)
      out.push_back(event_line(*r.ended_at, r.id, r.agent, event::seal_refused, seal_refusal_fields(s)));
  out.push_back(event_line(*r.ended_at, r.id, r.agent, event::run_end, run_end_fields(r)));
  // In time order, each kind in the record's order.
  std::stable_sort(out.begin(), out.end(),
                   [](const ojson& a, const ojson& b) { return event_time_ms(a) < event_time_ms(b); });
  return out;
}

}  // namespace px::run
