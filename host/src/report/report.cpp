#include "report/report.hpp"

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/replace_file.hpp"
#include "report/git_commits.hpp"
#include "report/proxy_summary.hpp"
#include "report/request_summary.hpp"
#include "report/time_text.hpp"
#include "report/transcript_sessions.hpp"
#include "run/record.hpp"

namespace px::report {

namespace fs = std::filesystem;

namespace {

const char* kLimits =
    "This is not a full audit. A program can read files or reach the network without appearing in any of "
    "these "
    "sources, and the transcripts are the agent's own files, which it could have changed.";

const char* kRecordLimits =
    "Written by Parallex: what was started, where, under which policy, when and how it ended; not what the "
    "program did.";
const char* kProxyLimits =
    "Only connections made through the run's proxy: host, port, verdict and byte counts. HTTPS is not "
    "opened, so "
    "no URL or content. A program that ignores the proxy settings (possible when unsealed) and servers on "
    "this "
    "machine reached directly do not appear.";
const char* kRequestLimits =
    "Only requests to the hosts the run's broker terminated (hosts with a brokered credential or request "
    "rules): method, host, path without its query, status and the rule that decided. Every other host is a "
    "tunnel the proxy cannot read.";
const char* kGitLimits =
    "Only commits reachable from a ref at the run's end and not at its start. Uncommitted changes, commits "
    "made "
    "and then dropped, and changes outside the repository do not appear; author names and dates are what the "
    "committer wrote.";

template <class J>  // nlohmann::json or the report's ordered Json: never converted (a copy)
std::string string_or(const J& j, const char* key, const std::string& fallback = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->template get<std::string>() : fallback;
}

// The run's record, typed; a record left without an end by a supervisor that
// died is closed here first (its end marked unknown), so that no later
// session or commit is ever attributed to it.
std::optional<run::RunRecord> load_record(const fs::path& run_dir, Source& source) {
  const fs::path file = run_dir / "run.json";
  source.name = "run record";
  source.location = file.string();
  source.cannot_show = kRecordLimits;
  auto record = run::read_record(run_dir);
  if (!record) {
    source.status = "missing";
    source.message =
        record.error().message +
        "; the run's command, times and folder are unknown, so its transcripts and commits cannot be "
        "matched.";
    return std::nullopt;
  }
  run::close_if_lost(run_dir, record.value());
  return std::move(record).value();
}

// Where the run's transcripts are: the home asked for, the home the run used,
// or the agent's.
fs::path home_of(const ReportRequest& req, const run::RunRecord& r) {
  if (req.home) return *req.home;
  if (r.policy.is_object() && r.policy.contains("run_home") && r.policy["run_home"].is_string())
    return r.policy["run_home"].get<std::string>();
  if (req.agent_home) return *req.agent_home;
  return {};
}

// Where the run worked (some harnesses keep their history there), or empty.
fs::path run_folder_of(const run::RunRecord& r) {
  if (r.policy.is_object() && r.policy.contains("run_folder") && r.policy["run_folder"].is_string())
    return r.policy["run_folder"].get<std::string>();
  return {};
}

struct KeptSessions {
  Json sessions = Json::array();
  std::vector<Source> sources;
};

// A run's sessions as keep_sessions() wrote them, with each transcript source
// pointing at the kept copy; nullopt when none was kept (or it cannot be read).
std::optional<KeptSessions> load_kept_sessions(const fs::path& run_dir) {
  const fs::path file = run_dir / kKeptSessionsFile;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const Json kept = parse_json_input<Json>(text.str());
  if (!kept.is_object() || !kept.contains("sessions") || !kept["sessions"].is_array() ||
      !kept.contains("sources") || !kept["sources"].is_array())
    return std::nullopt;
  KeptSessions out;
  out.sessions = kept["sessions"];
  const std::string when = string_or(kept, "kept_at", "?");
  for (const auto& s : kept["sources"]) {
    if (!s.is_object()) continue;
    Source source{string_or(s, "name"), file.string(), string_or(s, "status", "used"),
                  string_or(s, "message"), string_or(s, "cannot_show")};
    const std::string from = string_or(s, "location");
    source.message = (source.message.empty() ? "" : source.message + " ") + "Kept from " + from + " on " +
                     when + ", before the agent's home was rewound.";
    out.sources.push_back(std::move(source));
  }
  return out;
}

// Whether a session (its ISO times, either may be null) overlaps [since, until]
// (0: unbounded), as the transcript parsers' own window: one with no time is kept.
bool in_window(const Json& session, std::int64_t since, std::int64_t until) {
  const auto started = parse_iso_ms(string_or(session, "started_at"));
  const auto ended = parse_iso_ms(string_or(session, "ended_at"));
  if (!started && !ended) return true;
  const std::int64_t first = started ? *started : *ended, last = ended ? *ended : *started;
  return (until == 0 || first <= until) && (since == 0 || last >= since);
}

}  // namespace

void redact_strings(Json& value) {
  if (value.is_string()) {
    value = redact(value.get_ref<const std::string&>());
  } else if (value.is_array() || value.is_object()) {
    for (auto& child : value) redact_strings(child);
  }
}

Json report_run(const ReportRequest& req, const fs::path& run_dir) {
  const std::string id = run_dir.filename().string();
  Source record_source;
  const std::optional<run::RunRecord> record = load_record(run_dir, record_source);
  const bool have_record = record.has_value();
  const run::RunRecord empty;
  const run::RunRecord& r = have_record ? *record : empty;

  Json run;
  run["id"] = id;
  run["agent"] = r.agent.empty() ? req.agent : r.agent;
  run["command"] = r.command;
  run["argv"] = r.argv;
  run["harness"] = r.harness;
  run["run_folder"] = r.run_folder.string();
  run["sealed"] = have_record ? Json(r.seal != run::SealLevel::none) : Json(nullptr);
  run["seal"] = have_record ? Json(run::to_string(r.seal)) : Json(nullptr);
  run["network"] = r.network;
  run["options"] = r.options;
  run["started_at"] = have_record && !r.started_at.empty() ? Json(r.started_at) : Json(nullptr);
  run["ended_at"] = r.ended_at ? Json(*r.ended_at) : Json(nullptr);
  run["end_known"] = r.end_known;
  run["status"] = have_record ? Json(run::to_string(r.status)) : Json(nullptr);
  // Plain numbers (0: unknown): GCC 12 misreads optionals here as uninitialized.
  std::int64_t started_ms = 0, ended_ms = 0;
  if (auto t = parse_iso_ms(r.started_at)) started_ms = *t;
  if (r.ended_at)
    if (auto t = parse_iso_ms(*r.ended_at)) ended_ms = *t;
  const bool started = started_ms != 0;
  const bool ended = ended_ms != 0;
  run["duration_ms"] = started && ended ? Json(ended_ms - started_ms) : Json(nullptr);
  run["exit_status"] = r.exit_status ? Json(*r.exit_status) : Json(nullptr);
  Json notices = Json::array();
  for (const auto& n : r.notices)
    if (n.kind != run::NoticeKind::kill_switch && n.kind != run::NoticeKind::timing)
      notices.push_back(n.text);
  run["notices"] = notices;
  run["seal_refusals"] = r.seal_refusals ? Json::parse(run::to_json(*r.seal_refusals).dump()) : Json(nullptr);
  // Files other programs run later that the run made, moved aside (already redacted in the record).
  run["quarantined"] = Json::array();
  for (const auto& q : r.quarantined) run["quarantined"].push_back(Json::parse(run::to_json(q).dump()));
  std::vector<Source> sources{record_source};
  std::vector<std::string> warnings;
  if (have_record && !r.ended_at)
    warnings.push_back(
        "The run has no end time: it is still going. Sessions and commits up to now are shown.");
  if (have_record && !r.end_known)
    warnings.push_back(
        "The run's supervisor ended without finishing its record; its end is taken as the last "
        "trace it left, and nothing later is counted as its own.");

  // Transcripts: the sessions of the run's window, from the home the run used,
  // or as they were kept in the record before the agent's home was rewound.
  Json sessions = Json::array();
  if (auto kept = load_kept_sessions(run_dir)) {
    sessions = std::move(kept->sessions);
    for (auto& s : kept->sources) sources.push_back(std::move(s));
  } else if (!have_record || !started) {
    sources.push_back(Source{"transcripts", home_of(req, r).string(), "missing",
                             "Without the run's start time, its sessions cannot be told from others.", ""});
  } else if (!req.plugins) {
    sources.push_back(
        Source{"transcripts", home_of(req, r).string(), "missing", "No plugins are loaded.", ""});
  } else {
    SessionQuery sq{home_of(req, r), run_folder_of(r), r.harness, started_ms, ended_ms};
    Sessions found = sessions_in_window(*req.plugins, sq);
    sessions = std::move(found.sessions);
    for (auto& s : found.sources) sources.push_back(std::move(s));
  }
  run["activity"] = aggregate_activity(sessions);
  run["sessions"] = std::move(sessions);

  // Proxy log: always the one beside the record (the record's path may be stale if the folder moved).
  Source proxy_source{"proxy log", (run_dir / "proxy.jsonl").string(), "used", "", kProxyLimits};
  const bool had_proxy = !have_record || !r.proxy_log.empty();
  std::error_code ec;
  if (!had_proxy && !fs::exists(run_dir / "proxy.jsonl", ec)) {
    proxy_source.status = "none";
    proxy_source.message = "The run was offline: it had no proxy, so no host was reached through one.";
    run["hosts"] = Json{{"reached", Json::array()},
                        {"refused", Json::array()},
                        {"failed", Json::array()},
                        {"lines", 0},
                        {"bad_lines", 0}};
  } else {
    run["hosts"] = summarize_proxy_log(run_dir / "proxy.jsonl", proxy_source);
  }
  sources.push_back(proxy_source);

  // The broker's request log, when the run had a broker (its record says so).
  if (fs::exists(run_dir / "requests.jsonl", ec) || (have_record && r.broker)) {
    Source request_source{"request log", (run_dir / "requests.jsonl").string(), "used", "", kRequestLimits};
    run["requests"] = summarize_request_log(run_dir / "requests.jsonl", request_source);
    sources.push_back(request_source);
  }

  // Git: commits in the run folder.
  Source git_source{"git", "", "used", "", kGitLimits};
  if (!have_record) {
    git_source.status = "missing";
    git_source.message = "Without the run record, the run folder and its refs at start are unknown.";
    run["commits"] = Json::array();
  } else {
    CommitQuery cq;
    cq.run_folder = r.run_folder.string();
    if (r.refs_start) cq.refs_start = Json(*r.refs_start);
    cq.head_start = r.head_start;
    if (r.refs_end) cq.refs_end = Json(*r.refs_end);
    cq.allowed_signers = req.allowed_signers;
    cq.since_ms = started_ms;
    cq.until_ms = ended_ms;
    cq.whole_seconds = !r.end_known;
    run["commits"] = commits_made(cq, git_source);
  }
  sources.push_back(git_source);

  Json source_list = Json::array();
  for (const auto& s : sources) {
    source_list.push_back(s.to_json());
    if (s.status == "missing" || s.status == "partial") warnings.push_back(s.name + ": " + s.message);
  }
  run["sources"] = std::move(source_list);
  run["warnings"] = warnings;
  return run;
}

ReportRequest agent_request(const std::string& name, const fs::path& agent_root) {
  ReportRequest req;
  req.agent = name;
  req.runs_dir = agent_runs_dir(agent_root);
  req.older_runs_dirs.push_back(agent_root / "runs");
  req.agent_home = agent_root / "home";
  req.allowed_signers = agent_root / "keys" / "allowed_signers";
  return req;
}

Result<std::size_t> keep_sessions(const ReportRequest& req) {
  if (!req.plugins) return Error::invalid("keep_sessions: no plugins to read transcripts with");
  auto runs = list_runs(req.runs_dir, {});
  if (!runs) return std::size_t{0};  // no run yet: nothing to keep
  // Each home's transcripts are read once, whole, then shared out by window.
  // A damaged record is left out here as everywhere (list_runs names it).
  std::map<std::tuple<std::string, std::string, std::string>, Sessions> read;
  std::size_t kept = 0;
  for (const auto& ref : runs.value().runs) {
    const fs::path run_dir = ref.dir / ref.id;
    std::error_code ec;
    if (fs::exists(run_dir / kKeptSessionsFile, ec)) continue;
    Source ignored;
    const auto record = load_record(run_dir, ignored);
    if (!record) continue;
    const auto started = parse_iso_ms(record->started_at);
    if (!started) continue;
    const std::int64_t ended = record->ended_at ? parse_iso_ms(*record->ended_at).value_or(0) : 0;
    const fs::path home = home_of(req, *record);
    const fs::path run_folder = run_folder_of(*record);
    auto key = std::make_tuple(home.string(), run_folder.string(), record->harness);
    auto it = read.find(key);
    if (it == read.end())
      it = read.emplace(key, sessions_in_window(*req.plugins,
                                                SessionQuery{home, run_folder, record->harness, 0, 0}))
               .first;
    Json sessions = Json::array(), sources = Json::array();
    for (const auto& s : it->second.sessions)
      if (in_window(s, *started, ended)) sessions.push_back(s);
    for (const auto& s : it->second.sources) sources.push_back(s.to_json());
    const Json file{{"kept_at", format_iso_ms(now_ms())},
                    {"home", home.string()},
                    {"sessions", std::move(sessions)},
                    {"sources", std::move(sources)}};
    PX_TRY(replace_file(run_dir / kKeptSessionsFile, to_json_text(file)));
    ++kept;
  }
  return kept;
}

Json build_report(const ReportRequest& req) {
  Json report;
  report["schema"] = kSchema;
  report["generated_at"] = format_iso_ms(now_ms());
  report["agent"] = req.agent;
  report["runs_dir"] = req.runs_dir.string();
  report["selection"] =
      Json{{"run", req.selection.run_id ? Json(*req.selection.run_id) : Json(nullptr)},
           {"last", req.selection.last},
           {"since", req.selection.since_ms ? Json(format_iso_ms(*req.selection.since_ms)) : Json(nullptr)}};
  report["runs"] = Json::array();
  report["problems"] = Json::array();
  report["limits"] = kLimits;

  const std::string who = req.agent.empty() ? "in " + req.runs_dir.string() : "of agent " + req.agent;
  auto listing = list_runs(req.runs_dir, req.older_runs_dirs);
  Result<std::vector<RunRef>> runs = listing ? Result<std::vector<RunRef>>(listing.value().runs)
                                             : Result<std::vector<RunRef>>(listing.error());
  // Damaged records are named, each with its file, and left out.
  if (listing)
    for (const auto& d : listing.value().damaged) report["problems"].push_back(d);
  if (req.selection.run_id) {
    const std::string& id = *req.selection.run_id;
    const bool plain = id.find('/') == std::string::npos && id != "." && id != ".." && !id.empty();
    const RunRef* found = nullptr;
    if (plain && runs)
      for (const auto& r : runs.value())
        if (r.id == id) found = &r;
    if (!found) {
      std::string known;
      if (runs)
        for (auto it = runs.value().rbegin(); it != runs.value().rend() && it - runs.value().rbegin() < 5;
             ++it)
          known += (known.empty() ? "" : ", ") + it->id;
      report["problems"].push_back("There is no run " + id + " " + who +
                                   (known.empty() ? "." : "; the latest are: " + known + "."));
    } else {
      report["runs"].push_back(report_run(req, found->dir / found->id));
    }
  } else if (!runs) {
    report["problems"].push_back(runs.error().message);
  } else if (runs.value().empty()) {
    report["problems"].push_back(listing.value().damaged.empty() ? "No run has been recorded " + who + " yet."
                                                                 : "No readable run record " + who + ".");
  } else if (req.selection.since_ms) {
    for (const auto& r : runs.value()) {
      Source ignored;
      const auto record = load_record(r.dir / r.id, ignored);
      const auto started = record ? parse_iso_ms(record->started_at) : std::nullopt;
      const auto ended = record && record->ended_at ? parse_iso_ms(*record->ended_at) : std::nullopt;
      // A run still going (no end) or one that ended after TIME overlaps it; a run
      // without a readable record is listed, marked, rather than hidden.
      const std::int64_t last_moment = ended ? *ended : (started ? now_ms() : 0);
      if (last_moment >= *req.selection.since_ms || !started)
        report["runs"].push_back(report_run(req, r.dir / r.id));
    }
    if (report["runs"].empty())
      report["problems"].push_back("No run " + who + " since " + format_iso_ms(*req.selection.since_ms) +
                                   ".");
  } else {
    const RunRef& last = runs.value().back();
    report["runs"].push_back(report_run(req, last.dir / last.id));
  }
  redact_strings(report);
  return report;
}

}  // namespace px::report
