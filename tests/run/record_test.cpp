// The run's record and its status table: what every reader of run.json
// relies on, including records written before the schema had a version.
#include "run/record.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "run/status.hpp"

namespace px::run {
namespace {

namespace fs = std::filesystem;

TEST(RunStatus, OneExitStatusTable) {
  EXPECT_EQ(exit_status(RunStatus::exited, 0, 0), 0);
  EXPECT_EQ(exit_status(RunStatus::exited, 3, 0), 3);
  EXPECT_EQ(exit_status(RunStatus::signaled, 137, 9), 137);
  EXPECT_EQ(exit_status(RunStatus::killed, 137, 9), 137);
  EXPECT_EQ(exit_status(RunStatus::interrupted, 0, 15), 143);
  EXPECT_EQ(exit_status(RunStatus::not_found, 0, 0), 127);
  EXPECT_EQ(exit_status(RunStatus::not_executable, 0, 0), 126);
  EXPECT_EQ(exit_status(RunStatus::setup_failed, 0, 0), 125);
  EXPECT_EQ(exit_status(RunStatus::lost, 0, 0), 125);
  for (auto s : {RunStatus::starting, RunStatus::running, RunStatus::exited, RunStatus::signaled,
                 RunStatus::not_found, RunStatus::not_executable, RunStatus::setup_failed, RunStatus::killed,
                 RunStatus::interrupted, RunStatus::lost})
    EXPECT_EQ(status_from_string(to_string(s)), s) << to_string(s);
  EXPECT_FALSE(status_from_string("exploded"));
}

TEST(RunRecord, RoundTrips) {
  RunRecord r;
  r.id = "20261201-120000-abcd";
  r.agent = "bot";
  r.command = "claude -p hi";
  r.argv = {"claude", "-p", "hi"};
  r.seal = SealLevel::weaker;
  r.status = RunStatus::interrupted;
  r.signal = 15;
  r.exit_status = 143;
  r.started_at = "2026-12-01T12:00:00.000Z";
  r.ended_at = "2026-12-01T12:00:05.000Z";
  r.notices = {{NoticeKind::weaker_seal, "no Landlock"}, {NoticeKind::alert, "DECOY open"}};
  r.refused = {{"example.com", 443, "blocked-by-allowlist", 2}, {"127.0.0.1", 8080, "ip-literal-refused", 1}};
  r.workspace = WorkspaceRef{"ws-1", "parallex/ws-1", "main", "abc", "/p/.parallex/workspaces/ws-1", "/p"};
  r.options = {"--allow example.com"};
  auto back = RunRecord::from_json(r.to_json());
  ASSERT_TRUE(back) << back.error().message;
  const RunRecord& b = back.value();
  EXPECT_EQ(b.schema, RunRecord::kSchema);
  EXPECT_EQ(b.status, RunStatus::interrupted);
  EXPECT_EQ(b.signal, 15);
  EXPECT_EQ(b.exit_status, 143);
  EXPECT_EQ(b.seal, SealLevel::weaker);
  ASSERT_EQ(b.notices.size(), 2u);
  EXPECT_EQ(b.notices[1].kind, NoticeKind::alert);
  ASSERT_EQ(b.refused.size(), 2u);
  EXPECT_EQ(b.refused[1].host, "127.0.0.1");
  EXPECT_EQ(b.refused[1].port, 8080);
  ASSERT_TRUE(b.workspace);
  EXPECT_EQ(b.workspace->branch, "parallex/ws-1");
  EXPECT_EQ(b.options, r.options);
}

// What the seal refused, the process limit and the variables passed are
// types in the record and keep the keys run.json always had (reports, `jq`
// scripts and the MCP server read them by those names).
TEST(RunRecord, TypedPartsKeepTheirKeys) {
  RunRecord r;
  r.id = "20261201-120000-abcd";
  r.started_at = "2026-12-01T12:00:00.000Z";
  r.status = RunStatus::exited;
  r.seal_refusals = SealRefusals{{"seccomp (user notification)"},
                                 {"Landlock: the audit log is not readable"},
                                 {{"seccomp", "unshare CLONE_NEWUSER", "unshare", 2}},
                                 3};
  r.limits = RunLimits{4096, {{"pids-cgroup-v2", "the run's pids.max"}}};
  r.env_passed = {{"NODE_EXTRA_CA_CERTS", "the caller's environment", true, "--env"}};
  r.decoys = DecoyWatchState{"fanotify", 7, {}};
  r.decoy_hits = {
      {"/a/.config/aws/credentials", "open", 42, "cat (pid 42): cat credentials", "2026-12-01T12:00:01Z"}};
  r.kill_switch = KillSwitchRecord{"cgroup",
                                   "held by its cgroup",
                                   {{"pause", "parallex pause", "2026-12-01T12:00:02Z", {}, 1.5, {}},
                                    {"end", {}, "2026-12-01T12:00:03Z", {}, {}, 2}},
                                   std::vector<std::string>{"pids.max=512"}};
  BrokerRecord broker;
  broker.request_log = "/r/requests.jsonl";
  broker.reported = true;
  broker.terminated = {"api.github.com"};
  broker.credentials = {"github"};
  broker.hosts = {{"api.github.com", 3, 1}};
  broker.exfiltration = {{"github", "evil.example", "header", 2}};
  broker.failures = {{"api.github.com", "tls", 1}};
  r.broker = broker;
  Quarantined moved;
  moved.path = "/w/.vscode/tasks.json";
  moved.moved_to = "/r/quarantine/1";
  moved.kind = "file";
  moved.why = "VS Code runs its tasks";
  moved.when = "when the run ended";
  r.quarantined = {moved};
  HeldChange held;
  held.path = "/h/.claude/settings.json";
  held.kind = "file";
  held.what = "changed";
  held.keys = {"hooks"};
  r.home_changes = {held};
  r.refs_start = GitRefs{{"refs/heads/main", "aaaa"}};
  r.refs_end = GitRefs{{"refs/heads/main", "bbbb"}};
  r.changed_files = std::vector<std::string>{" M a.txt"};
  OpenRequest page;
  page.url = "https://example.org/device?code=ABCD";
  page.host = "example.org";
  page.port = 443;
  page.in_rule = false;
  page.by = "xdg-open";
  page.at = "2026-12-01T12:00:04Z";
  r.open_requests = OpenRequests{{page}, 3};
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["open_requests"]["requests"][0]["url"], "https://example.org/device?code=ABCD");
  EXPECT_EQ(j["open_requests"]["requests"][0]["in_rule"], false);
  EXPECT_FALSE(j["open_requests"]["requests"][0].contains("process"));
  EXPECT_EQ(j["open_requests"]["refused"], 3);
  EXPECT_EQ(j["kill_switch"]["mechanism"], "cgroup");
  EXPECT_EQ(j["kill_switch"]["events"][0]["by"], "parallex pause");
  EXPECT_EQ(j["kill_switch"]["events"][0]["ms"], 1.5);
  EXPECT_FALSE(j["kill_switch"]["events"][1].contains("by"));
  EXPECT_EQ(j["kill_switch"]["events"][1]["leftovers_killed"], 2);
  EXPECT_EQ(j["kill_switch"]["limits"][0], "pids.max=512");
  EXPECT_EQ(j["broker"]["request_log"], "/r/requests.jsonl");
  EXPECT_EQ(j["broker"]["credentials"], nlohmann::json::array({"github"}));
  EXPECT_EQ(j["broker"]["hosts"][0]["refused"], 1);
  EXPECT_EQ(j["broker"]["exfiltration"][0]["where"], "header");
  EXPECT_EQ(j["broker"]["failures"][0]["reason"], "tls");
  EXPECT_EQ(j["quarantined"][0]["moved_to"], "/r/quarantine/1");
  EXPECT_EQ(j["quarantined"][0]["contents"], "");
  EXPECT_FALSE(j["quarantined"][0].contains("error"));
  EXPECT_EQ(j["home_changes"][0]["keys"][0], "hooks");
  EXPECT_FALSE(j["home_changes"][0].contains("applied_at"));
  EXPECT_EQ(j["refs_start"]["refs/heads/main"], "aaaa");
  EXPECT_EQ(j["refs_end"]["refs/heads/main"], "bbbb");
  EXPECT_EQ(j["changed_files"][0], " M a.txt");
  EXPECT_EQ(j["seal_refusals"]["refused"][0]["call"], "unshare CLONE_NEWUSER");
  EXPECT_EQ(j["seal_refusals"]["refused"][0]["count"], 2);
  EXPECT_EQ(j["seal_refusals"]["more"], 3);
  EXPECT_EQ(j["seal_refusals"]["not_collected"][0], "Landlock: the audit log is not readable");
  EXPECT_EQ(j["limits"]["processes"], 4096);
  EXPECT_EQ(j["limits"]["held_by"][0]["id"], "pids-cgroup-v2");
  EXPECT_EQ(j["env_passed"][0]["name"], "NODE_EXTRA_CA_CERTS");
  EXPECT_EQ(j["env_passed"][0]["passed"], true);
  EXPECT_EQ(j["decoys"]["method"], "fanotify");
  EXPECT_EQ(j["decoys"]["watched"], 7);
  EXPECT_EQ(j["decoy_hits"][0]["path"], "/a/.config/aws/credentials");
  EXPECT_EQ(j["decoy_hits"][0]["pid"], 42);
  auto back = RunRecord::from_json(j);
  ASSERT_TRUE(back) << back.error().message;
  const RunRecord& b = back.value();
  ASSERT_TRUE(b.open_requests);
  ASSERT_EQ(b.open_requests->requests.size(), 1u);
  EXPECT_EQ(b.open_requests->requests[0].host, "example.org");
  EXPECT_EQ(b.open_requests->requests[0].in_rule, std::optional<bool>(false));
  EXPECT_EQ(b.open_requests->refused, 3u);
  ASSERT_TRUE(b.seal_refusals);
  ASSERT_EQ(b.seal_refusals->refused.size(), 1u);
  EXPECT_EQ(b.seal_refusals->refused[0].process, "unshare");
  EXPECT_EQ(b.seal_refusals->refused[0].count, 2u);
  EXPECT_EQ(b.seal_refusals->collected_from, r.seal_refusals->collected_from);
  EXPECT_EQ(b.seal_refusals->more, 3u);
  ASSERT_TRUE(b.limits);
  EXPECT_EQ(b.limits->processes, 4096u);
  ASSERT_EQ(b.limits->held_by.size(), 1u);
  EXPECT_EQ(b.limits->held_by[0].description, "the run's pids.max");
  ASSERT_EQ(b.env_passed.size(), 1u);
  EXPECT_EQ(b.env_passed[0].origin, "--env");
  EXPECT_TRUE(b.env_passed[0].passed);
  ASSERT_TRUE(b.decoys);
  EXPECT_EQ(b.decoys->watched, 7u);
  ASSERT_EQ(b.decoy_hits.size(), 1u);
  EXPECT_EQ(b.decoy_hits[0].pid, 42);
  EXPECT_EQ(b.decoy_hits[0].process, "cat (pid 42): cat credentials");
  // Written back, each part is what it was, to the letter.
  EXPECT_EQ(b.to_json(), j);
  ASSERT_TRUE(b.kill_switch);
  ASSERT_EQ(b.kill_switch->events.size(), 2u);
  EXPECT_EQ(b.kill_switch->events[1].leftovers_killed, 2u);
  ASSERT_TRUE(b.broker);
  EXPECT_TRUE(b.broker->reported);
  EXPECT_EQ(b.broker->exfiltration[0].count, 2u);
  ASSERT_EQ(b.quarantined.size(), 1u);
  EXPECT_EQ(b.quarantined[0].path, "/w/.vscode/tasks.json");
  ASSERT_EQ(b.home_changes.size(), 1u);
  EXPECT_EQ(b.home_changes[0].what, "changed");
  EXPECT_EQ(b.refs_end, r.refs_end);
  EXPECT_EQ(b.changed_files, r.changed_files);
  // The broker's entry in the record's first write: its request log alone.
  RunRecord first = r;
  first.broker = BrokerRecord{};
  first.broker->request_log = "/r/requests.jsonl";
  EXPECT_EQ(first.to_json()["broker"], nlohmann::json({{"request_log", "/r/requests.jsonl"}}));
  // A run that never launched has neither; the keys say null / are absent, as before.
  RunRecord none;
  none.id = r.id;
  none.started_at = r.started_at;
  const nlohmann::json n = none.to_json();
  EXPECT_TRUE(n["seal_refusals"].is_null());
  EXPECT_FALSE(n.contains("limits"));
  EXPECT_FALSE(n.contains("env_passed"));
  auto none_back = RunRecord::from_json(n);
  ASSERT_TRUE(none_back) << none_back.error().message;
  EXPECT_FALSE(none_back.value().seal_refusals);
  EXPECT_FALSE(none_back.value().limits);
  EXPECT_FALSE(none_back.value().decoys);
  EXPECT_TRUE(n["decoys"].is_null());
  EXPECT_TRUE(n["decoy_hits"].is_array());
  EXPECT_TRUE(n["kill_switch"].is_null());
  for (const char* key : {"broker", "quarantined", "home_changes", "refs_start", "refs_end", "changed_files"})
    EXPECT_FALSE(n.contains(key)) << key;
  EXPECT_FALSE(none_back.value().kill_switch);
  EXPECT_FALSE(none_back.value().broker);
  EXPECT_FALSE(none_back.value().refs_start);
  EXPECT_FALSE(none_back.value().changed_files);
  // A record of an older version: a held change without a kind is a file's;
  // parts of a shape this one does not know read as empty, and the record loads.
  nlohmann::json old = n;
  old["home_changes"] = nlohmann::json::array({{{"path", "/h/.codex/config.toml"}, {"what", "new"}}});
  old["quarantined"] = nlohmann::json::array({"not an object", {{"path", "/w/.envrc"}}});
  old["kill_switch"] = "cgroup";
  old["refs_start"] = {{"refs/heads/main", "aaaa"}, {"refs/odd", 3}};
  auto old_back = RunRecord::from_json(old);
  ASSERT_TRUE(old_back) << old_back.error().message;
  ASSERT_EQ(old_back.value().home_changes.size(), 1u);
  EXPECT_EQ(old_back.value().home_changes[0].kind, "file");
  ASSERT_EQ(old_back.value().quarantined.size(), 1u);
  EXPECT_EQ(old_back.value().quarantined[0].path, "/w/.envrc");
  EXPECT_FALSE(old_back.value().kill_switch);
  EXPECT_EQ(old_back.value().refs_start, (GitRefs{{"refs/heads/main", "aaaa"}}));
}

// Records written before run.json had a schema: notices were strings,
// refused hosts "host:port", the exit status the command's.
TEST(RunRecord, ReadsRecordsWithoutASchema) {
  const auto old = nlohmann::json::parse(R"({
    "id": "20261130-010203-beef", "agent": "", "command": "make test", "argv": ["make", "test"],
    "harness": "generic", "run_folder": "/w", "sealed": true, "network": "allowlist",
    "started_at": "2026-11-30T01:02:03.000Z", "ended_at": "2026-11-30T01:02:04.000Z",
    "exit_status": 2, "notices": ["left out /x: ENOENT"], "refused_hosts": ["example.com:443"]})");
  auto r = RunRecord::from_json(old);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r.value().schema, 1);
  EXPECT_EQ(r.value().status, RunStatus::exited);
  EXPECT_EQ(r.value().exit_code, 2);
  ASSERT_EQ(r.value().notices.size(), 1u);
  EXPECT_EQ(r.value().notices[0].text, "left out /x: ENOENT");
  ASSERT_EQ(r.value().refused.size(), 1u);
  EXPECT_EQ(r.value().refused[0].host, "example.com");
  EXPECT_EQ(r.value().refused[0].port, 443);
  // The stand-in launcher's spelling (run_id, start_ms) still reads.
  auto stand_in = RunRecord::from_json(nlohmann::json::parse(
      R"({"run_id": "x", "start_ms": 1796000000000, "end_ms": 1796000001000, "exit_status": 0, "sealed": false})"));
  ASSERT_TRUE(stand_in);
  EXPECT_EQ(stand_in.value().id, "x");
  EXPECT_EQ(stand_in.value().seal, SealLevel::none);
  EXPECT_FALSE(stand_in.value().started_at.empty());
  // A record from a newer Parallex is refused with what to do.
  auto newer = RunRecord::from_json(nlohmann::json{{"schema", 99}, {"id", "y"}});
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("update Parallex"), std::string::npos);
}

// A folder of its own for a test's record (removed by the test).
fs::path record_folder() {
  char templ[] = "/tmp/px-record-XXXXXX";
  return ::mkdtemp(templ) ? fs::path(templ) : fs::path();
}

// A running record whose supervisor is this process.
RunRecord running_record(const std::string& id) {
  RunRecord r;
  r.id = id;
  r.status = RunStatus::running;
  r.started_at = "2026-12-01T12:00:00.000Z";
  r.supervisor_pid = ::getpid();
  r.supervisor_start = process_start_ticks(::getpid());
  return r;
}

// A record left without an end by a supervisor that is gone is closed as
// lost, at the last trace it left; one whose supervisor lives is left alone.
TEST(RunRecord, LostRunsAreClosedLiveOnesAreNot) {
  const fs::path dir = record_folder();
  ASSERT_FALSE(dir.empty());
  const RunRecord live = running_record("live");
  ASSERT_TRUE(write_record(dir, live));
  auto read = read_record(dir);
  ASSERT_TRUE(read);
  EXPECT_FALSE(close_if_lost(dir, read.value()));
  EXPECT_FALSE(read.value().ended_at);

  RunRecord lost = live;
  lost.supervisor_start += 1;  // the pid was reused by another process
  ASSERT_TRUE(write_record(dir, lost));
  read = read_record(dir);
  ASSERT_TRUE(read);
  EXPECT_TRUE(close_if_lost(dir, read.value()));
  auto closed = read_record(dir);
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed.value().status, RunStatus::lost);
  EXPECT_TRUE(closed.value().ended_at);
  EXPECT_FALSE(closed.value().end_known);
  fs::remove_all(dir);
}

// The writers that may meet after a supervisor's death (its watchdog adding
// what it moved aside, `parallex runs` closing the record) take turns: from
// two threads and a child process at once, no change is lost, and a record
// closed as lost keeps what was added before and gets what is added after.
TEST(RunRecord, UpdatesTakeTurnsAndNoneIsLost) {
  const fs::path dir = record_folder();
  ASSERT_FALSE(dir.empty());
  RunRecord r = running_record("turns");
  r.supervisor_start += 1;  // a supervisor that is gone
  ASSERT_TRUE(write_record(dir, r));
  auto add = [&dir](const std::string& who, int n) {
    for (int i = 0; i < n; ++i)
      (void)update_record(dir, [&](RunRecord& now) {
        Quarantined q;
        q.path = who + std::to_string(i);
        now.quarantined.push_back(q);
        return true;
      });
  };
  const pid_t child = ::fork();
  if (child == 0) {
    add("c", 40);
    ::_exit(0);
  }
  std::thread a(add, "a", 40), b(add, "b", 40);
  auto read = read_record(dir);
  ASSERT_TRUE(read);
  const bool closed = close_if_lost(dir, read.value());
  a.join();
  b.join();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto after = read_record(dir);
  ASSERT_TRUE(after);
  EXPECT_TRUE(closed);
  EXPECT_EQ(after.value().status, RunStatus::lost);
  EXPECT_EQ(after.value().quarantined.size(), 120u);
  EXPECT_FALSE(update_record(dir / "missing", [](RunRecord&) { return true; }));
  fs::remove_all(dir);
}

// Listings read in full only the records that may still be open: the quick
// look says "ended" only when the record's own end is there, never for a
// command line that merely mentions one.
TEST(RunRecord, AQuickLookTellsAnEndedRecordOnly) {
  const fs::path dir = record_folder();
  ASSERT_FALSE(dir.empty());
  RunRecord r = running_record("quick");
  r.argv = {"sh", "-c", "echo '\n  \"ended_at\": \"2026-01-01\"'"};
  r.command = r.argv[2];
  ASSERT_TRUE(write_record(dir, r));
  EXPECT_FALSE(record_ended(dir)) << "a running record was taken as ended";
  r.ended_at = "2026-12-01T12:00:05.000Z";
  r.status = RunStatus::exited;
  ASSERT_TRUE(write_record(dir, r));
  EXPECT_TRUE(record_ended(dir));
  { std::ofstream(dir / "run.json") << "not json"; }
  EXPECT_FALSE(record_ended(dir));
  EXPECT_FALSE(record_ended(dir / "missing"));
  fs::remove_all(dir);
}

// A supervisor passes its policy dumped once (policy_text()): the file reads
// back the same as one written from the record's own policy, and is valid JSON
// whatever else the record holds.
TEST(RunRecord, APolicyGivenAsTextIsWrittenAsThePolicy) {
  const fs::path dir = record_folder();
  ASSERT_FALSE(dir.empty());
  RunRecord r = running_record("policy-text");
  r.policy = {
      {"run_folder", "/p"}, {"grants", {{{"path", "/p"}, {"access", "write"}}}}, {"note", "a \"quote\"\n"}};
  ASSERT_TRUE(write_record(dir, r));
  auto plain = read_record(dir);
  ASSERT_TRUE(plain) << plain.error().message;

  const std::string text = policy_text(r.policy);
  RunRecord without = r;
  without.policy = nlohmann::json::object({{"stale", true}});  // not written when the text is given
  ASSERT_TRUE(write_record(dir, without, text));
  auto given = read_record(dir);
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given.value().policy, r.policy);
  EXPECT_EQ(given.value().to_json(), plain.value().to_json());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace px::run
