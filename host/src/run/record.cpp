#include "run/record.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/json_io.hpp"
#include "common/read_file.hpp"
#include "common/replace_file.hpp"
#include "common/shown.hpp"
#include "common/unique_fd.hpp"
#include "run/json_read.hpp"
#include "run/lost_questions.hpp"

namespace px::run {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace json_read;

const char* to_string(SealLevel level) {
  switch (level) {
    case SealLevel::full:
      return "full";
    case SealLevel::weaker:
      return "weaker";
    case SealLevel::none:
      return "none";
  }
  return "none";
}

namespace {

// The schema-1 spelling of refused hosts: "host:port" strings, reason unknown.
RefusedRequest refused_from_text(const std::string& text) {
  RefusedRequest r;
  const auto colon = text.rfind(':');
  r.host = colon == std::string::npos ? text : text.substr(0, colon);
  if (colon != std::string::npos) {
    try {
      r.port = static_cast<std::uint16_t>(std::stoul(text.substr(colon + 1)));
    } catch (...) {
      r.port = 0;
    }
  }
  r.reason = "blocked-by-allowlist";
  r.count = 1;
  return r;
}

json decoys_json(const DecoyWatchState& d) {
  if (!d.error.empty()) return {{"error", d.error}};
  return {{"method", d.method}, {"watched", d.watched}};
}

SealRefusals seal_refusals_from(const json& j) {
  SealRefusals r;
  r.collected_from = strings(j, "collected_from");
  r.not_collected = strings(j, "not_collected");
  if (auto it = j.find("refused"); it != j.end() && it->is_array())
    for (const auto& x : *it)
      if (x.is_object())
        r.refused.push_back({str(x, "source"), str(x, "call"), str(x, "process"), count_of(x, "count")});
  r.more = count_of(j, "more");
  return r;
}

RunLimits limits_from(const json& j) {
  RunLimits l;
  l.processes = count_of(j, "processes");
  if (auto it = j.find("held_by"); it != j.end() && it->is_array())
    for (const auto& h : *it)
      if (h.is_object()) l.held_by.push_back({str(h, "id"), str(h, "description")});
  return l;
}

}  // namespace

json RunRecord::to_json() const {
  json j = to_json_without_policy();
  j["policy"] = policy;
  return j;
}

json RunRecord::to_json_without_policy() const {
  json notices_json = json::array();
  for (const auto& n : notices) notices_json.push_back({{"kind", run::to_string(n.kind)}, {"text", n.text}});
  json hits_json = json::array();
  for (const auto& h : decoy_hits) hits_json.push_back(run::to_json(h));
  json refused_json = json::array();
  for (const auto& r : refused)
    refused_json.push_back(
        {{"host", r.host}, {"port", r.port}, {"reason", r.reason}, {"count", r.count}, {"dns", r.dns}});
  json j{{"schema", schema},
         {"id", id},
         {"agent", agent},
         {"command", command},
         {"argv", argv},
         {"harness", harness},
         {"run_folder", run_folder.string()},
         {"sealed", seal != SealLevel::none},
         {"seal", run::to_string(seal)},
         {"network", network},
         {"options", options},
         {"policy_digest", policy_digest},
         {"started_at", started_at},
         {"ended_at", opt(ended_at)},
         {"end_known", end_known},
         {"status", run::to_string(status)},
         {"exit_code", opt(exit_code)},
         {"signal", opt(signal)},
         {"exit_status", opt(exit_status)},
         {"proxy_log", proxy_log.string()},
         {"notices", notices_json},
         {"refused", refused_json},
         {"seal_refusals", seal_refusals ? run::to_json(*seal_refusals) : json(nullptr)},
         {"decoys", decoys ? decoys_json(*decoys) : json(nullptr)},
         {"decoy_hits", hits_json},
         {"kill_switch", kill_switch ? run::to_json(*kill_switch) : json(nullptr)},
         {"supervisor", {{"pid", supervisor_pid}, {"start_ticks", supervisor_start}}}};
  if (!setup_error.empty()) j["setup_error"] = setup_error;
  if (limits) j["limits"] = run::to_json(*limits);
  if (git_repository_created) j["git_repository_created"] = git_repository_created->string();
  if (!quarantined.empty()) {
    j["quarantined"] = json::array();
    for (const auto& q : quarantined) j["quarantined"].push_back(run::to_json(q));
  }
  if (!home_changes.empty()) {
    j["home_changes"] = json::array();
    for (const auto& c : home_changes) j["home_changes"].push_back(run::to_json(c));
  }
  if (!env_passed.empty()) {
    j["env_passed"] = json::array();
    for (const auto& v : env_passed) j["env_passed"].push_back(run::to_json(v));
  }
  if (!repository.empty()) j["repository"] = repository;
  if (refs_start) j["refs_start"] = *refs_start;
  if (!head_start.empty()) j["head_start"] = head_start;
  if (refs_end) j["refs_end"] = *refs_end;
  if (!head_end.empty()) j["head_end"] = head_end;
  if (!snapshot.empty()) j["snapshot"] = snapshot;
  if (workspace)
    j["workspace"] = {{"name", workspace->name},          {"branch", workspace->branch},
                      {"path", workspace->path.string()}, {"project", workspace->project.string()},
                      {"base", workspace->base},          {"base_commit", workspace->base_commit}};
  if (changed_files) j["changed_files"] = *changed_files;
  if (network_live) j["network_live"] = run::to_json(*network_live);
  if (open_requests) j["open_requests"] = run::to_json(*open_requests);
  if (broker) j["broker"] = run::to_json(*broker);
  return j;
}

Result<RunRecord> RunRecord::from_json(const json& j) {
  if (!j.is_object()) return Error::invalid("a run record is not a JSON object");
  RunRecord r;
  const auto schema_it = j.find("schema");
  r.schema = schema_it != j.end() && schema_it->is_number_integer() ? schema_it->get<int>() : 1;
  if (r.schema > kSchema)
    return Error::unsupported("the run record has schema " + std::to_string(r.schema) +
                              ", newer than this Parallex reads (" + std::to_string(kSchema) +
                              "): update Parallex to read it");
  r.id = str(j, "id");
  if (r.id.empty()) r.id = str(j, "run_id");  // the stand-in launcher's spelling
  r.agent = str(j, "agent");
  r.command = str(j, "command");
  if (auto it = j.find("argv"); it != j.end() && it->is_array())
    for (const auto& a : *it)
      if (a.is_string()) r.argv.push_back(a.get<std::string>());
  if (r.command.empty() && j.contains("command") && j["command"].is_array())
    for (const auto& a : j["command"])
      if (a.is_string()) r.command += (r.command.empty() ? "" : " ") + a.get<std::string>();
  r.harness = str(j, "harness");
  r.run_folder = str(j, "run_folder");
  const std::string seal = str(j, "seal");
  if (seal == "weaker")
    r.seal = SealLevel::weaker;
  else if (seal == "none" ||
           (seal.empty() && j.contains("sealed") && j["sealed"].is_boolean() && !j["sealed"].get<bool>()))
    r.seal = SealLevel::none;
  r.network = str(j, "network");
  r.policy_digest = str(j, "policy_digest");
  if (auto it = j.find("options"); it != j.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_string()) r.options.push_back(o.get<std::string>());
  r.policy = j.contains("policy") && j["policy"].is_object() ? j["policy"] : json::object();
  r.started_at = str(j, "started_at");
  if (r.started_at.empty() && j.contains("start_ms") && j["start_ms"].is_number_integer())
    r.started_at = iso_utc_ms(j["start_ms"].get<std::int64_t>());
  if (const std::string ended = str(j, "ended_at"); !ended.empty()) r.ended_at = ended;
  if (!r.ended_at && j.contains("end_ms") && j["end_ms"].is_number_integer())
    r.ended_at = iso_utc_ms(j["end_ms"].get<std::int64_t>());
  r.end_known = !j.contains("end_known") || !j["end_known"].is_boolean() || j["end_known"].get<bool>();
  r.exit_code = int_or_null(j, "exit_code");
  r.signal = int_or_null(j, "signal");
  r.exit_status = int_or_null(j, "exit_status");
  r.setup_error = str(j, "setup_error");
  if (const auto status = status_from_string(str(j, "status"))) {
    r.status = *status;
  } else if (r.schema == 1) {
    // Before the schema: an exit status, or a setup error, or still running.
    if (r.exit_status) {
      r.status = RunStatus::exited;
      r.exit_code = r.exit_status;
    } else {
      r.status = r.setup_error.empty() ? (r.ended_at ? RunStatus::lost : RunStatus::running)
                                       : RunStatus::setup_failed;
    }
  } else {
    return Error::invalid("the run record's status '" + str(j, "status") + "' is not one Parallex knows");
  }
  r.proxy_log = str(j, "proxy_log");
  if (auto it = j.find("notices"); it != j.end() && it->is_array()) {
    for (const auto& n : *it) {
      if (n.is_string())
        r.notices.push_back({NoticeKind::seal, n.get<std::string>()});
      else if (n.is_object())
        r.notices.push_back({notice_kind_from_string(str(n, "kind")), str(n, "text")});
    }
  }
  if (auto it = j.find("refused"); it != j.end() && it->is_array()) {
    for (const auto& x : *it) {
      if (!x.is_object()) continue;
      RefusedRequest q;
      q.host = str(x, "host");
      q.reason = str(x, "reason");
      q.port = x.contains("port") && x["port"].is_number_unsigned() ? x["port"].get<std::uint16_t>() : 0;
      q.count = x.contains("count") && x["count"].is_number_unsigned() ? x["count"].get<std::uint64_t>() : 1;
      q.dns = x.contains("dns") && x["dns"].is_boolean() && x["dns"].get<bool>();
      r.refused.push_back(std::move(q));
    }
  } else if (auto old = j.find("refused_hosts"); old != j.end() && old->is_array()) {
    for (const auto& x : *old)
      if (x.is_string()) r.refused.push_back(refused_from_text(x.get<std::string>()));
  }
  if (auto it = j.find("seal_refusals"); it != j.end() && it->is_object())
    r.seal_refusals = seal_refusals_from(*it);
  if (auto it = j.find("decoys"); it != j.end() && it->is_object())
    r.decoys = DecoyWatchState{str(*it, "method"), count_of(*it, "watched"), str(*it, "error")};
  if (auto it = j.find("decoy_hits"); it != j.end() && it->is_array())
    for (const auto& h : *it)
      if (h.is_object()) {
        const pid_t pid = h.contains("pid") && h["pid"].is_number_integer() ? h["pid"].get<pid_t>() : 0;
        r.decoy_hits.push_back({str(h, "path"), str(h, "event"), pid, str(h, "process"), str(h, "at")});
      }
  if (auto it = j.find("kill_switch"); it != j.end() && it->is_object())
    r.kill_switch = KillSwitchRecord::from_json(*it);
  if (auto it = j.find("broker"); it != j.end() && it->is_object()) r.broker = BrokerRecord::from_json(*it);
  if (auto it = j.find("network_live"); it != j.end() && it->is_object())
    r.network_live = NetworkLive::from_json(*it);
  if (auto it = j.find("open_requests"); it != j.end() && it->is_object())
    r.open_requests = OpenRequests::from_json(*it);
  if (auto it = j.find("limits"); it != j.end() && it->is_object()) r.limits = limits_from(*it);
  if (const std::string git = str(j, "git_repository_created"); !git.empty()) r.git_repository_created = git;
  r.quarantined = json_read::objects<Quarantined>(j, "quarantined", Quarantined::from_json);
  r.home_changes = json_read::objects<HeldChange>(j, "home_changes", HeldChange::from_json);
  if (auto it = j.find("env_passed"); it != j.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_object())
        r.env_passed.push_back({str(v, "name"), str(v, "from"), v.value("passed", false), str(v, "origin")});
  if (auto it = j.find("supervisor"); it != j.end() && it->is_object()) {
    r.supervisor_pid =
        it->contains("pid") && (*it)["pid"].is_number_integer() ? (*it)["pid"].get<pid_t>() : 0;
    r.supervisor_start = it->contains("start_ticks") && (*it)["start_ticks"].is_number_unsigned()
                             ? (*it)["start_ticks"].get<std::uint64_t>()
                             : 0;
  }
  r.repository = str(j, "repository");
  if (auto it = j.find("refs_start"); it != j.end()) r.refs_start = git_refs_from_json(*it);
  if (auto it = j.find("refs_end"); it != j.end()) r.refs_end = git_refs_from_json(*it);
  r.head_start = str(j, "head_start");
  r.head_end = str(j, "head_end");
  r.snapshot = str(j, "snapshot");
  if (auto it = j.find("workspace"); it != j.end() && it->is_object()) {
    WorkspaceRef w;
    w.name = str(*it, "name");
    w.branch = str(*it, "branch");
    w.base = str(*it, "base");
    w.base_commit = str(*it, "base_commit");
    w.path = str(*it, "path");
    w.project = str(*it, "project");
    r.workspace = std::move(w);
  }
  if (auto it = j.find("changed_files"); it != j.end() && it->is_array())
    r.changed_files = json_read::strings(j, "changed_files");
  // Every record Parallex writes has both from its first write on.
  if (r.id.empty()) return Error::invalid("it names no run id");
  if (r.started_at.empty()) return Error::invalid("it has no start time");
  return r;
}

namespace {

// A record holds the policy (about 30 KB) and what the run moved aside with
// its first lines; far below this.
constexpr std::size_t kMaxRecordBytes = 32 << 20;

// DIR/run.json as a JSON object, read through the one reader of small files:
// a folder, a FIFO, a device or a link in its place is refused at once, never
// waited on or followed, and what is not a whole JSON object is damaged.
// Its members in the file's order: a record written back keeps `ended_at`
// near its top (record_ended()) and the policy last.
Result<ordered_json> read_record_json(const fs::path& run_dir) {
  const fs::path file = run_dir / "run.json";
  const std::string name = shown(file.string());
  auto text = read_regular_file(file, {.max_bytes = kMaxRecordBytes, .follow_links = false});
  if (!text) {
    if (text.error().kind == ErrorKind::not_found) return Error::not_found("there is no run record " + name);
    // The reader's message names the file first: said once here.
    std::string why = text.error().message;
    if (why.rfind(file.string() + " ", 0) == 0) why = "it " + why.substr(file.string().size() + 1);
    return Error::invalid("the run record " + name + " is damaged: " + shown(why));
  }
  const std::string& t = text.value();
  if (t.find_first_not_of(" \t\r\n") == std::string::npos)
    return Error::invalid("the run record " + name + " is damaged: it is empty");
  if (json_nests_deeper_than(t, kMaxJsonDepth))
    return Error::invalid("the run record " + name + " is damaged: it nests deeper than " +
                          std::to_string(kMaxJsonDepth) + " levels, which no record does");
  ordered_json j = parse_json_input<ordered_json>(t);
  if (j.is_discarded())
    return Error::invalid("the run record " + name +
                          " is damaged: it is not valid JSON (cut short, or holding " +
                          "bytes that are not text)");
  if (!j.is_object())
    return Error::invalid("the run record " + name + " is damaged: it is not a JSON object");
  return j;
}

Result<RunRecord> record_from(const ordered_json& j, const fs::path& run_dir) {
  auto record = RunRecord::from_json(json(j));
  if (!record) {
    const std::string name = shown((run_dir / "run.json").string());
    // A newer schema is not damage: the record is fine, this Parallex is old.
    if (record.error().kind == ErrorKind::unsupported)
      return Error::invalid(name + ": " + record.error().message);
    return Error::invalid("the run record " + name + " is damaged: " + record.error().message);
  }
  return record;
}

}  // namespace

Result<RunRecord> read_record(const fs::path& run_dir) {
  PX_TRY_ASSIGN(const ordered_json j, read_record_json(run_dir));
  return record_from(j, run_dir);
}

bool record_ended(const fs::path& run_dir) {
  // O_NONBLOCK: a FIFO in the record's place does not hold the open; it is
  // not a regular file, so the caller reads it in full and names it damaged.
  const UniqueFd fd(::open((run_dir / "run.json").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  char buf[8192];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return false;
  // A whole record ends with its object's brace and holds no NUL: one cut
  // short or holding one is read in full, and named damaged, by the caller.
  char tail[16];
  const off_t from =
      st.st_size > static_cast<off_t>(sizeof tail) ? st.st_size - static_cast<off_t>(sizeof tail) : 0;
  const ssize_t t = ::pread(fd.get(), tail, sizeof tail, from);
  std::string_view end(tail, t > 0 ? static_cast<std::size_t>(t) : 0);
  while (!end.empty() && (end.back() == '\n' || end.back() == ' ')) end.remove_suffix(1);
  if (end.empty() || end.back() != '}') return false;
  if (std::memchr(buf, '\0', static_cast<std::size_t>(n))) return false;
  // A member of the top object, as dump(2) writes it: two spaces in. Inside a
  // string a quote is always escaped, so this cannot be a value's text.
  const std::string_view head(buf, static_cast<std::size_t>(n));
  constexpr std::string_view key = "\n  \"ended_at\": ";
  const auto at = head.find(key);
  if (at == std::string_view::npos || at + key.size() + 4 > head.size()) return false;
  return head.substr(at + key.size(), 4) != "null";
}

std::string policy_text(const json& policy) {
  // Indented as a member of the record's object.
  std::string text = to_json_text(policy, 2);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

Status write_record(const fs::path& run_dir, const RunRecord& record, std::string_view policy) {
  std::string text = to_json_text(record.to_json_without_policy(), 2);
  // The object ends with "\n}": the policy goes in as its last member.
  text.resize(text.size() - 2);
  text.append(",\n  \"policy\": ");
  if (policy.empty())
    text.append(policy_text(record.policy));
  else
    text.append(policy);
  text.append("\n}\n");
  return replace_file(run_dir / "run.json", text);
}

namespace {
constexpr const char* kReserve = ".reserve";
}  // namespace

Status reserve_record_space(const fs::path& run_dir, std::size_t bytes) {
  const fs::path file = run_dir / kReserve;
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  int err = fd ? ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)) : errno;
  if (err == 0) return ok();
  fd.reset();  // what it took is freed once it is closed and unlinked
  ::unlink(file.c_str());
  if (err == ENOSPC || err == EDQUOT) return state_folder_full(run_dir, bytes);
  return Error::io("reserve room for the run's record in " + shown(file.string()), err);
}

Error state_folder_full(const fs::path& run_dir, std::size_t bytes) {
  struct statvfs vfs {};
  std::string free_text = "too little";
  if (::statvfs(run_dir.parent_path().c_str(), &vfs) == 0)
    free_text = std::to_string(vfs.f_bavail * vfs.f_frsize / 1024) + " KiB";
  return Error::conflict("the filesystem of Parallex's state folder is full: the run's record needs " +
                         std::to_string(bytes / 1024) + " KiB to keep its outcome and " + free_text +
                         " is free there, so the command was not started; free some space (old runs' records "
                         "are in " +
                         shown(run_dir.parent_path().string()) +
                         "), or set XDG_STATE_HOME to a folder on a filesystem with room");
}

void release_record_space(const fs::path& run_dir) {
  ::unlink((run_dir / kReserve).c_str());
}

Status write_outcome_only(const fs::path& run_dir, const RunRecord& record) {
  constexpr std::size_t kNotices = 20;
  RunRecord small = record;
  small.policy = json::object();
  if (small.notices.size() > kNotices) small.notices.resize(kNotices);
  small.notices.push_back({NoticeKind::alert,
                           "the filesystem of Parallex's state folder was full at the run's end: this record "
                           "keeps how the run ended, not all it held (no policy, the first notices only)"});
  if (small.refused.size() > kNotices) small.refused.resize(kNotices);
  for (auto& q : small.quarantined) q.contents.clear();
  small.changed_files.reset();
  small.seal_refusals.reset();
  return replace_file(run_dir / "run.json", to_json_text(small.to_json(), 2) + "\n");
}

std::uint64_t process_start_ticks(pid_t pid) {
  if (pid <= 0) return 0;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  const std::string stat(buf, static_cast<std::size_t>(n));
  // The comm field may hold spaces and parentheses: fields are counted after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) {
      try {
        return std::stoull(field);
      } catch (...) {
        return 0;
      }
    }
  return 0;
}

bool process_running(pid_t pid, std::uint64_t start) {
  if (pid <= 0 || start == 0) return false;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  const std::string stat(buf, static_cast<std::size_t>(n));
  // After the comm field (which may hold spaces and parentheses): the state.
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X' && process_start_ticks(pid) == start;
}

bool supervisor_alive(const RunRecord& record) {
  return process_running(record.supervisor_pid, record.supervisor_start);
}

namespace {

// Runs `change` on DIR/run.json as JSON under the record folder's flock, and
// writes what it made when it says so. A record that cannot be read is
// never written.
Result<bool> update_record_json(const fs::path& run_dir, const std::function<bool(ordered_json&)>& change) {
  const UniqueFd dir(::open(run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return Error::io("open the run's record folder " + shown(run_dir.string()), errno);
  while (::flock(dir.get(), LOCK_EX) != 0 && errno == EINTR) {
  }
  PX_TRY_ASSIGN(ordered_json j, read_record_json(run_dir));
  if (!change(j)) return false;
  PX_TRY(replace_file(run_dir / "run.json", to_json_text(j, 2) + "\n"));
  return true;  // the lock goes with `dir`
}

}  // namespace

Result<bool> update_record(const fs::path& run_dir, const std::function<bool(RunRecord&)>& change) {
  return update_record_json(run_dir, [&](ordered_json& j) {
    auto record = record_from(j, run_dir);
    if (!record || !change(record.value())) return false;
    // What this Parallex does not know of the record is kept as it was.
    const json fresh = record.value().to_json();
    for (auto it = fresh.begin(); it != fresh.end(); ++it) j[it.key()] = ordered_json(it.value());
    return true;
  });
}

namespace {

constexpr const char* kLostNotice =
    "the run's supervisor ended without finishing this record; its end is unknown and is taken as the last "
    "trace it left";

// When a lost run ended, as far as anyone can tell: the last trace it left,
// the newest file of its folder, never before its start (a filesystem's
// clock is coarser than the one that dated the start).
std::string lost_end(const fs::path& run_dir, const std::string& started_at) {
  // (file_clock's epoch is not the system clock's: an empty file_time_type{}
  // is a date in 2174, later than any real file.)
  std::error_code ec;
  fs::file_time_type newest = fs::file_time_type::min();
  for (fs::directory_iterator it(run_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto t = it->symlink_status(ec).type() == fs::file_type::regular ? it->last_write_time(ec) : newest;
    if (!ec && t > newest) newest = t;
  }
  if (newest == fs::file_time_type::min()) return started_at;  // nothing to date it by: it ended as it began
  const auto sys = std::chrono::file_clock::to_sys(newest);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
  const std::string end = iso_utc_ms(ms);
  // Both are ISO 8601 UTC to the millisecond: they sort as they happened.
  return end < started_at ? started_at : end;
}

// What became of a question open when the supervisor died.
std::string lost_question_notice(const AskedQuestion& q) {
  return "question " + std::to_string(q.question) + " (" + q.host + ":" + std::to_string(q.port) +
         ") was open when the run's supervisor died: nobody answered it, and the connections it held were "
         "closed with the supervisor";
}

}  // namespace

bool close_if_lost(const fs::path& run_dir, RunRecord& record) {
  if (record.ended_at || supervisor_alive(record)) return false;
  // Again under the record folder's lock, from the file: the run's watchdog
  // may be adding what it moved aside (protect/sweep_after_death.hpp).
  // Only the end is added: everything the record held stays as it was.
  std::optional<RunRecord> closed;
  LostQuestions lost;
  const auto written = update_record_json(run_dir, [&](ordered_json& j) {
    auto now = record_from(j, run_dir);
    if (!now || now.value().ended_at || supervisor_alive(now.value())) return false;
    const std::string end = lost_end(run_dir, now.value().started_at);
    j["ended_at"] = end;
    j["end_known"] = false;
    j["status"] = run::to_string(RunStatus::lost);
    std::vector<std::string> said{kLostNotice};
    lost = lost_questions(run_dir, end);
    if (!lost.questions.empty()) {
      if (!j.contains("network_live") || !j["network_live"].is_object())
        j["network_live"] = ordered_json(to_json(NetworkLive{lost.ask_seconds, {}, {}}));
      auto& questions = j["network_live"]["questions"];
      if (!questions.is_array()) questions = ordered_json::array();
      for (const auto& q : lost.questions) {
        questions.push_back(ordered_json(to_json(q)));
        said.push_back(lost_question_notice(q));
      }
    }
    if (j.find("notices") == j.end()) j["notices"] = ordered_json::array();
    if (auto notices = j.find("notices"); notices->is_array())
      for (const auto& text : said)
        notices->push_back({{"kind", run::to_string(NoticeKind::alert)}, {"text", text}});
    if (auto typed = RunRecord::from_json(json(j))) closed = std::move(typed).value();
    return closed.has_value();
  });
  if (!written || !written.value() || !closed) return false;
  close_lost_questions(run_dir, closed->id, closed->agent, lost, closed->ended_at.value_or(""));
  release_record_space(run_dir);  // the room its supervisor held for the end it never wrote
  record = std::move(*closed);
  return true;
}

json to_json(const SealRefusals& r) {
  json items = json::array();
  for (const auto& x : r.refused)
    items.push_back({{"source", x.source}, {"call", x.call}, {"process", x.process}, {"count", x.count}});
  return {{"collected_from", r.collected_from},
          {"not_collected", r.not_collected},
          {"refused", std::move(items)},
          {"more", r.more}};
}

json to_json(const RunLimits& l) {
  json held = json::array();
  for (const auto& h : l.held_by) held.push_back({{"id", h.id}, {"description", h.description}});
  return {{"processes", l.processes}, {"held_by", std::move(held)}};
}

json to_json(const PassedVariable& v) {
  return {{"name", v.name}, {"from", v.from}, {"passed", v.passed}, {"origin", v.origin}};
}

json to_json(const DecoyHit& hit) {
  json j{{"path", hit.path.string()}, {"event", hit.event}, {"at", hit.at}};
  if (hit.pid) j["pid"] = hit.pid;
  if (!hit.process.empty()) j["process"] = hit.process;
  return j;
}

}  // namespace px::run
