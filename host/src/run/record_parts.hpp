#pragma once
// The parts of a run record (run/record.hpp) that other rooms write: the
// kill switch's, the credential broker's, the protected files moved aside,
// the home settings held back, the repository's refs and the workspace's
// changes. Each a type with its JSON, under the keys run.json has always
// used; a record that lacks a key, or was written by an older version, still
// reads (what is missing reads as empty).
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace px::run {

namespace fs = std::filesystem;

// `kill_switch`: how the run was held, and what was asked of it
// (killswitch::RunControl::record()).
struct KillSwitchEvent {
  std::string op;                                 // "pause", "resume", "kill", "end"
  std::optional<std::string> by;                  // who asked ("parallex kill ID", ...); none at the end
  std::string at;                                 // ISO 8601 UTC
  std::optional<bool> pending;                    // a pause held until the run's first process existed
  std::optional<double> ms;                       // how long a pause took to freeze the run
  std::optional<std::uint64_t> leftovers_killed;  // the end: processes of the run still there, killed
  static KillSwitchEvent from_json(const nlohmann::json& j);
};
struct KillSwitchRecord {
  std::string mechanism;  // "cgroup", "process-tree", ...
  std::string note;
  std::vector<KillSwitchEvent> events;
  std::optional<std::vector<std::string>> limits;  // the cgroup's limits as applied ("pids.max=512")
  static KillSwitchRecord from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const KillSwitchEvent& e);
nlohmann::json to_json(const KillSwitchRecord& k);

// `network_live`: what was decided with the user while the run went on
// (supervisor/run_questions.hpp, docs/ask.md): ask mode's questions and how
// each ended, and the rule's live changes.
struct AskedQuestion {
  std::uint64_t question = 0;
  std::string host;
  std::uint16_t port = 0;
  std::string rule_reason;  // what the rule said: blocked-by-allowlist, port-not-allowed, network-offline
  std::string asked_at, answered_at;
  // allowed-once, allowed-for-run, allowed-always, denied, denied-for-run,
  // not-answered, stopped, paused, lost (open when the supervisor died: run/lost_questions.hpp)
  std::string outcome;
  std::string by;       // who answered ("parallex approve (uid 1000)"); empty when nobody did
  std::string process;  // the process that asked, when it was found (redacted)
  std::uint64_t connections = 0;
  static AskedQuestion from_json(const nlohmann::json& j);
};
struct LiveRuleChange {
  std::string change;  // "allow" or "deny"
  std::string rule;    // "api.example.com", "github.com:22", "*.corp.example"
  std::string by, at;
  static LiveRuleChange from_json(const nlohmann::json& j);
};
struct NetworkLive {
  std::uint64_t ask_seconds = 0;  // 0: ask mode was off
  std::vector<AskedQuestion> questions;
  std::vector<LiveRuleChange> rule_changes;
  static NetworkLive from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const AskedQuestion& q);
nlohmann::json to_json(const LiveRuleChange& c);
nlohmann::json to_json(const NetworkLive& n);

// `open_requests`: the pages the run asked to open (its `BROWSER`, `xdg-open`:
// supervisor/run_opener.hpp, docs/opener.md). Nothing was opened; each address
// was shown to the user, who opens it or not.
struct OpenRequest {
  std::string url;   // as the run gave it (redacted: a secret the broker holds never shows)
  std::string host;  // an http(s) URL's host; empty for another kind of address
  std::uint16_t port = 0;
  std::optional<bool> in_rule;  // the host inside the run's network rule (http and https only)
  std::string by;               // how the run asked: "xdg-open", "BROWSER", "www-browser"...
  std::string process;          // the process that asked (redacted), when it was found
  std::string at;               // ISO 8601 UTC
  static OpenRequest from_json(const nlohmann::json& j);
};
struct OpenRequests {
  std::vector<OpenRequest> requests;
  // Requests not taken: past the rate limit, too long, empty, or more than
  // the record keeps. Counted, never kept.
  std::uint64_t refused = 0;
  static OpenRequests from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const OpenRequest& r);
nlohmann::json to_json(const OpenRequests& r);

// `broker`: the run's credential broker. Names and counts only, never a secret.
struct BrokerHost {
  std::string host;
  std::uint64_t requests = 0, refused = 0;
};
struct ExfiltrationAttempt {  // a placeholder (or a secret) seen going where it may not go
  std::string credential, host, where;
  std::uint64_t count = 0;
};
struct BrokerFailure {
  std::string host, reason;
  std::uint64_t count = 0;
};
struct BrokerRecord {
  fs::path request_log;
  // The run's end wrote what follows; the record's first write, before the
  // command starts, has the request log alone.
  bool reported = false;
  std::vector<std::string> terminated;   // hosts the broker terminates
  std::vector<std::string> credentials;  // names
  std::vector<BrokerHost> hosts;
  std::vector<ExfiltrationAttempt> exfiltration;
  std::vector<BrokerFailure> failures;
  static BrokerRecord from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const BrokerRecord& b);

// `quarantined`, one entry: a file other programs run later that the run
// made (or left in .git), moved aside into quarantine/ of the record folder
// (protect/quarantine.hpp).
struct Quarantined {
  fs::path path;         // where it was
  fs::path moved_to;     // in the run's record folder; empty when it could not be moved (see error)
  std::string kind;      // "file", "folder", "link"
  std::string why;       // what it is and why it was moved
  std::string contents;  // what it held: names, sizes, first lines (redacted, bounded)
  std::string when;      // "during the run", "when the run was paused", "when the run ended"
  std::string at;        // ISO 8601 UTC
  std::string restored;  // what was put back in its place (a link that was there before), or empty
  std::string error;     // why it stayed where it was, or empty
  static Quarantined from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const Quarantined& q);

// `home_changes`, one entry: a change the run made to a harness's
// command-running settings in the user's home, held back in home/ of the
// record folder until `parallex runs apply` (protect/home_settings.hpp).
struct HeldChange {
  fs::path path;                    // in the user's home
  std::string kind;                 // "file" or "folder" (a record without one: "file")
  std::string what;                 // "changed", "new", "removed"
  std::string format;               // "json", "toml", "whole" (files)
  std::vector<std::string> keys;    // the keys held back (JSON, TOML), as a user reads them
  std::vector<std::string> landed;  // the data keys written to the home at the run's end
  std::vector<std::string> files;   // a folder's files the run wrote (relative), "-name" for a removal
  std::string reason;               // what the harness does with it
  std::string origin;               // the plugin that declared it
  std::string held;                 // the run's version in the record folder (file, or folder of files)
  std::string changes;              // a JSON or TOML file's held keys with their values (record folder, 0600)
  std::string base_sha256;          // the user's file when the run started ("" when there was none)
  std::string note;                 // why data was held too, or could not be merged
  std::string applied_at;           // when `runs apply` applied it, or empty
  static HeldChange from_json(const nlohmann::json& j);
};
nlohmann::json to_json(const HeldChange& c);

// `refs_start`, `refs_end`: a repository's refs, {refname: oid}.
using GitRefs = std::map<std::string, std::string>;
// An object's string members; null (not an object): none.
std::optional<GitRefs> git_refs_from_json(const nlohmann::json& j);

}  // namespace px::run
