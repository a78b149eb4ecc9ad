#pragma once
// The run's events (docs/events.md): every decision taken about a run, one
// JSON line each in a versioned schema, so `parallex events` and a SIEM read
// one stream across runs.
//
// Where they come from: the supervisor writes its own (the run's start and
// end, the kill switch, files moved aside, decoys touched, the seal's
// refusals, questions asked and answered, rule changes) to events.jsonl in
// the run's record folder through EventLog, as they happen; the proxy's and
// the broker's decisions stay in their own logs (proxy.jsonl, requests.jsonl,
// whose formats reports read) and are mapped to the same schema when read.
// So a run's events are its record's files, and a report and `events` never
// disagree. A reader reads files the run writes: it cannot slow the run.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/json_lines.hpp"
#include "run/record.hpp"

namespace px::run {

namespace fs = std::filesystem;

// The schema's version, in every event as "v". Fields are only ever added to
// a version; a field renamed or removed, or a meaning changed, is a new one.
inline constexpr int kEventSchema = 1;
// The supervisor's events, in the run's record folder.
inline constexpr const char* kEventsFile = "events.jsonl";

// The event types (docs/events.md says each one's fields and OCSF class).
namespace event {
inline constexpr std::string_view run_start = "run.start";
inline constexpr std::string_view run_end = "run.end";
inline constexpr std::string_view network_allowed = "network.allowed";
inline constexpr std::string_view network_refused = "network.refused";
inline constexpr std::string_view network_failed = "network.failed";
inline constexpr std::string_view network_asked = "network.asked";
inline constexpr std::string_view network_answered = "network.answered";
inline constexpr std::string_view rule_changed = "rule.changed";
inline constexpr std::string_view request_allowed = "request.allowed";
inline constexpr std::string_view request_refused = "request.refused";
inline constexpr std::string_view request_failed = "request.failed";
inline constexpr std::string_view credential_swapped = "credential.swapped";
inline constexpr std::string_view exfiltration_refused = "credential.exfiltration_refused";
inline constexpr std::string_view seal_refused = "seal.refused";
inline constexpr std::string_view file_moved_aside = "file.moved_aside";
inline constexpr std::string_view decoy_touched = "decoy.touched";
inline constexpr std::string_view run_paused = "killswitch.paused";
inline constexpr std::string_view run_resumed = "killswitch.resumed";
inline constexpr std::string_view run_killed = "killswitch.killed";
inline constexpr std::string_view leftovers_killed = "killswitch.leftovers_killed";
inline constexpr std::string_view open_requested = "run.open_requested";
}  // namespace event

// One event: {"v", "time", "run", "agent" (agent runs only), "type", ...fields}.
nlohmann::ordered_json event_line(const std::string& time, const std::string& run, const std::string& agent,
                                  std::string_view type, const nlohmann::ordered_json& fields);

// The supervisor's writer of events.jsonl. Any thread may emit: each event is
// one write(2) on an O_APPEND descriptor (common/json_lines.hpp), never a
// wait on a reader. A full disk loses events, not the run.
class EventLog {
 public:
  EventLog() = default;  // writes nowhere
  // Creates RUN_DIR/events.jsonl (0600) or appends to it.
  static Result<EventLog> open(const fs::path& run_dir, std::string run_id, std::string agent);
  // An event of `type` now, with `fields` (an object, or null for none).
  void emit(std::string_view type, const nlohmann::ordered_json& fields = nullptr) const;
  // The same at a time known already (ISO 8601 UTC, milliseconds), e.g. a
  // kill switch event's own.
  void emit_at(const std::string& time, std::string_view type, const nlohmann::ordered_json& fields) const;
  explicit operator bool() const { return static_cast<bool>(file_); }

 private:
  JsonLinesWriter file_;
  std::string run_, agent_;
};

// The fields of the supervisor's events, from the record's parts (one place,
// so a record read afterwards gives the same events as the run wrote).
nlohmann::ordered_json run_start_fields(const RunRecord& record);
nlohmann::ordered_json run_end_fields(const RunRecord& record);
nlohmann::ordered_json seal_refusal_fields(const SealRefusal& refusal);
nlohmann::ordered_json decoy_fields(const DecoyHit& hit);
nlohmann::ordered_json moved_aside_fields(const Quarantined& quarantined);
nlohmann::ordered_json open_request_fields(const OpenRequest& request);
// A kill switch event as RunControl::record() keeps it ({op, by, at, ...},
// run/record_parts.hpp's KillSwitchEvent):
// its type (nullopt for an op that is not one) and fields.
std::optional<std::string_view> kill_switch_type(const nlohmann::json& op);
nlohmann::ordered_json kill_switch_fields(const nlohmann::json& op);

// A line of the proxy's decision log (proxy.jsonl) or of the broker's request
// log (requests.jsonl) as an event; nullopt for a line that is not one.
std::optional<nlohmann::ordered_json> event_from_proxy_line(const nlohmann::json& line,
                                                            const std::string& run, const std::string& agent);
std::optional<nlohmann::ordered_json> event_from_request_line(const nlohmann::json& line,
                                                              const std::string& run,
                                                              const std::string& agent);
// An events.jsonl line as read back: itself when it is an event of this
// schema (a "v" it knows, a time, a type), else nullopt.
std::optional<nlohmann::ordered_json> event_from_event_line(const nlohmann::json& line);

// An event's time in milliseconds since the epoch (0 when it has none that
// reads): events are ordered by it, never by the text.
std::int64_t event_time_ms(const nlohmann::ordered_json& event);

// The events of a record written before events.jsonl existed: its start and,
// once it ended, its end.
std::vector<nlohmann::ordered_json> events_of_old_record(const RunRecord& record);

}  // namespace px::run
