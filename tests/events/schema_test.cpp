// The events schema: what the supervisor's writer puts in events.jsonl, and
// how a line of the proxy's and the broker's logs reads as an event.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/json_lines.hpp"
#include "run/events.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;
namespace event = px::run::event;

fs::path scratch(const std::string& name) {
  std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / (name + "-XXXXXX")).string();
  EXPECT_TRUE(::mkdtemp(tmpl.data()));
  return tmpl;
}

std::vector<json> lines_of(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST(EventSchema, TheWriterPutsTheCommonFieldsFirstAndTheTypesOwnAfter) {
  const fs::path dir = scratch("events-writer");
  {
    auto log = px::run::EventLog::open(dir, "20261206-114000-ab12", "reviewer");
    ASSERT_TRUE(log) << log.error().message;
    log.value().emit(event::run_paused, {{"by", "parallex pause"}, {"ms", 1.5}});
    // A field may not overwrite the common ones.
    log.value().emit_at("2026-12-06T11:40:00.000Z", event::rule_changed,
                        {{"change", "allow"}, {"rule", "a.example:443"}, {"run", "other"}, {"v", 9}});
    auto adhoc = px::run::EventLog::open(dir, "20261206-114000-ab12", "");
    ASSERT_TRUE(adhoc);
    adhoc.value().emit(event::run_resumed);
  }
  const auto lines = lines_of(dir / px::run::kEventsFile);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["v"], 1);
  EXPECT_EQ(lines[0]["run"], "20261206-114000-ab12");
  EXPECT_EQ(lines[0]["agent"], "reviewer");
  EXPECT_EQ(lines[0]["type"], "killswitch.paused");
  EXPECT_EQ(lines[0]["by"], "parallex pause");
  EXPECT_TRUE(px::parse_iso_ms(lines[0]["time"].get<std::string>()));
  EXPECT_EQ(lines[1]["time"], "2026-12-06T11:40:00.000Z");
  EXPECT_EQ(lines[1]["run"], "20261206-114000-ab12");
  EXPECT_EQ(lines[1]["v"], 1);
  EXPECT_EQ(lines[1]["rule"], "a.example:443");
  EXPECT_FALSE(lines[2].contains("agent")) << "an ad-hoc run has no agent field";
  // The file is the run's: 0600, like its other logs.
  EXPECT_EQ(fs::status(dir / px::run::kEventsFile).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  fs::remove_all(dir);
}

TEST(EventSchema, ProxyLinesMapToNetworkEventsWithTheirFields) {
  const json allowed = json::parse(
      R"({"time":"2026-11-29T19:03:26.123Z","method":"CONNECT","host":"api.anthropic.com","port":443,"verdict":"allowed","reason":"allowed","status":200,"address":"160.79.104.10","closed":"eof","inspected":"tls-sni","bytes_up":5120,"bytes_down":81234,"duration_ms":5821})");
  auto e = px::run::event_from_proxy_line(allowed, "r1", "");
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["type"], "network.allowed");
  EXPECT_EQ((*e)["time"], "2026-11-29T19:03:26.123Z");
  EXPECT_EQ((*e)["host"], "api.anthropic.com");
  EXPECT_EQ((*e)["port"], 443);
  EXPECT_EQ((*e)["address"], "160.79.104.10");
  EXPECT_EQ((*e)["bytes_down"], 81234);
  EXPECT_EQ((*e)["source"], "proxy");
  EXPECT_FALSE(e->contains("verdict"));

  const json dns = json::parse(
      R"({"time":"2026-11-29T19:03:29.002Z","method":"DNS","host":"x.evil.example","port":53,"verdict":"denied","reason":"blocked-by-allowlist","status":0,"type":"TXT","rcode":"NXDOMAIN","bytes_up":0,"bytes_down":0,"duration_ms":0})");
  e = px::run::event_from_proxy_line(dns, "r1", "reviewer");
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["type"], "network.refused") << "the event's type is never the DNS question's";
  EXPECT_EQ((*e)["dns_type"], "TXT");
  EXPECT_EQ((*e)["rcode"], "NXDOMAIN");
  EXPECT_EQ((*e)["agent"], "reviewer");

  json line = dns;
  line["verdict"] = "paused";
  line["reason"] = "paused";
  EXPECT_EQ((*px::run::event_from_proxy_line(line, "r1", ""))["type"], "network.refused");
  line["verdict"] = "failed";
  line["reason"] = "connect-failed";
  EXPECT_EQ((*px::run::event_from_proxy_line(line, "r1", ""))["type"], "network.failed");
  line["verdict"] = "denied";
  line["reason"] = "credential-exfiltration";
  EXPECT_EQ((*px::run::event_from_proxy_line(line, "r1", ""))["type"], "credential.exfiltration_refused");
  // Ask mode's lines carry the question and its answer.
  line = allowed;
  line["question"] = 3;
  line["answer"] = "once";
  e = px::run::event_from_proxy_line(line, "r1", "");
  EXPECT_EQ((*e)["question"], 3);
  EXPECT_EQ((*e)["answer"], "once");
  // Not a decision: no event.
  EXPECT_FALSE(px::run::event_from_proxy_line(json::parse(R"({"time":"x"})"), "r1", ""));
  line["verdict"] = "maybe";
  EXPECT_FALSE(px::run::event_from_proxy_line(line, "r1", ""));
}

TEST(EventSchema, BrokerLinesMapToRequestAndCredentialEvents) {
  const json swapped = json::parse(
      R"({"time":"2026-12-01T17:20:11.532Z","host":"api.github.com","port":443,"method":"GET","path":"/search/code?[query]","status":200,"verdict":"allowed","reason":"allowed","rule":"api.github.com #1 allow GET,HEAD /**","credentials":"github","bytes_up":0,"bytes_down":5121,"duration_ms":212})");
  auto e = px::run::event_from_request_line(swapped, "r1", "");
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["type"], "credential.swapped");
  EXPECT_EQ((*e)["credentials"], "github");
  EXPECT_EQ((*e)["path"], "/search/code?[query]");
  EXPECT_EQ((*e)["source"], "broker");
  json line = swapped;
  line.erase("credentials");
  EXPECT_EQ((*px::run::event_from_request_line(line, "r1", ""))["type"], "request.allowed");
  line["verdict"] = "denied";
  line["reason"] = "request-rule-denied";
  EXPECT_EQ((*px::run::event_from_request_line(line, "r1", ""))["type"], "request.refused");
  line["reason"] = "credential-exfiltration";
  EXPECT_EQ((*px::run::event_from_request_line(line, "r1", ""))["type"], "credential.exfiltration_refused");
  line["verdict"] = "failed";
  line["reason"] = "upstream-closed";
  EXPECT_EQ((*px::run::event_from_request_line(line, "r1", ""))["type"], "request.failed");
}

TEST(EventSchema, EventLinesOfAnotherVersionOrWithoutTheirFieldsAreNotEvents) {
  EXPECT_TRUE(px::run::event_from_event_line(
      json::parse(R"({"v":1,"time":"2026-12-06T11:40:00.000Z","run":"r","type":"run.start"})")));
  EXPECT_FALSE(px::run::event_from_event_line(
      json::parse(R"({"v":2,"time":"2026-12-06T11:40:00.000Z","run":"r","type":"run.start"})")));
  EXPECT_FALSE(px::run::event_from_event_line(json::parse(R"({"v":1,"run":"r","type":"run.start"})")));
  EXPECT_FALSE(px::run::event_from_event_line(json::parse(R"({"v":"1","time":"t","run":"r","type":"x"})")));
}

TEST(EventSchema, AnOldRecordGivesItsStartEndAndWhatItRecorded) {
  px::run::RunRecord r;
  r.id = "20261206-114000-ab12";
  r.agent = "reviewer";
  r.command = "claude -p review";
  r.started_at = "2026-12-06T11:40:00.000Z";
  r.ended_at = "2026-12-06T11:41:00.000Z";
  r.status = px::run::RunStatus::killed;
  r.exit_status = 137;
  r.kill_switch = px::run::KillSwitchRecord::from_json(
      {{"events",
        {{{"op", "pause"}, {"by", "parallex pause"}, {"at", "2026-12-06T11:40:10.000Z"}},
         {{"op", "kill"}, {"by", "parallex kill"}, {"at", "2026-12-06T11:40:20.000Z"}}}}});
  r.decoy_hits.push_back({"/home/a/.config/aws/credentials", "open", 42, "cat", "2026-12-06T11:40:05.000Z"});
  r.quarantined.push_back(px::run::Quarantined::from_json({{"path", "/w/.vscode/tasks.json"},
                                                           {"why", "VS Code runs it"},
                                                           {"at", "2026-12-06T11:40:59.000Z"},
                                                           {"moved_to", "/r/quarantine/1"}}));
  r.seal_refusals = px::run::SealRefusals{};
  r.seal_refusals->refused.push_back({"seccomp", "unshare CLONE_NEWUSER", "sh", 2});
  const auto events = px::run::events_of_old_record(r);
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(e["type"]);
  EXPECT_EQ(types,
            (std::vector<std::string>{"run.start", "decoy.touched", "killswitch.paused", "killswitch.killed",
                                      "file.moved_aside", "seal.refused", "run.end"}));
  EXPECT_EQ(events.back()["status"], "killed");
  EXPECT_EQ(events.back()["exit_status"], 137);
  EXPECT_EQ(events.front()["agent"], "reviewer");
  EXPECT_EQ(events[5]["call"], "unshare CLONE_NEWUSER");
}

}  // namespace
