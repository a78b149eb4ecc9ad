// The run's activity over its sessions, with each command's and change's time
// and the links between a command and the files it changed (docs/reports.md):
// a session's `command` index counts in its own commands only; and the
// timeline that puts them on one axis with the run's events (docs/ui.md).
#include <gtest/gtest.h>

#include "report/report.hpp"
#include "report/timeline.hpp"
#include "report/views.hpp"
#include "test_paths.hpp"
#include "test_support.hpp"

using namespace px_test;
using px::report::Json;

namespace {

Json command(const std::string& text, const Json& at) {
  return Json{{"command", text},     {"cwd", "/w"},     {"exit_code", 0},
              {"status", "success"}, {"tool", "shell"}, {"at", at}};
}

Json change(const std::string& path, const Json& at, const Json& by = nullptr) {
  Json c{{"path", path}, {"tool", "apply_patch"}, {"action", "modify"}, {"at", at}};
  if (!by.is_null()) c["command"] = by;
  return c;
}

// A session as the parsers give it: each entry's time ("at" above) moved out
// of it into the session's action_times, in the lists' order.
Json session(const std::string& id, Json commands, Json changed) {
  Json times{{"commands", Json::array()}, {"files_changed", Json::array()}};
  for (auto* list : {&commands, &changed})
    for (auto& entry : *list) {
      times[list == &commands ? "commands" : "files_changed"].push_back(entry["at"]);
      entry.erase("at");
    }
  return Json{{"harness", "codex"},
              {"session_id", id},
              {"cwd", "/w"},
              {"files_read", Json::array()},
              {"files_changed", std::move(changed)},
              {"commands", std::move(commands)},
              {"urls", Json::array()},
              {"web_searches", Json::array()},
              {"action_times", std::move(times)}};
}

// Two sessions, each linking a change to its own command 0 and 1: in the run's
// list the second session's indices come after the first's commands.
Json two_sessions() {
  return Json::array(
      {session("s1",
               Json::array({command("make", "2026-11-20T10:01:00.000Z"),
                            command("sed -i a.c", "2026-11-20T10:02:00.000Z")}),
               Json::array({change("/w/a.c", "2026-11-20T10:02:00.500Z", 1),
                            change("/w/b.c", "2026-11-20T10:02:00.600Z", 1)})),
       session("s2", Json::array({command("ls", "2026-11-20T10:03:00.000Z"), command("patch c.c", nullptr)}),
               Json::array({change("/w/c.c", nullptr, 1), change("/w/d.c", "2026-11-20T10:03:30.000Z")}))});
}

}  // namespace

TEST(ReportActivity, ACommandsIndexIsMappedAcrossSessions) {
  const Json a = px::report::aggregate_activity(two_sessions());
  ASSERT_EQ(a["commands"].size(), 4u);
  EXPECT_EQ(a["commands"][1]["command"], "sed -i a.c");
  EXPECT_EQ(a["commands"][1]["at"], "2026-11-20T10:02:00.000Z");
  EXPECT_EQ(a["commands"][1]["session_id"], "s1");
  EXPECT_EQ(a["commands"][1]["files_changed"], Json::array({"/w/a.c", "/w/b.c"}));
  EXPECT_EQ(a["commands"][0]["files_changed"], Json::array());
  // s2's command 1 is the run's command 3.
  EXPECT_EQ(a["commands"][3]["files_changed"], Json::array({"/w/c.c"}));
  ASSERT_EQ(a["files_changed"].size(), 4u);
  EXPECT_EQ(a["files_changed"][0]["command"], 1);
  EXPECT_EQ(a["files_changed"][1]["command"], 1);
  EXPECT_EQ(a["files_changed"][2]["command"], 3);
  EXPECT_TRUE(a["files_changed"][3]["command"].is_null()) << "no session linked it";
  EXPECT_EQ(a["files_changed"][3]["at"], "2026-11-20T10:03:30.000Z");
}

// Transcripts of a parser that gives no times (or a kept copy from before
// times were kept): every key is there, null; nothing is linked.
TEST(ReportActivity, ASessionWithoutTimesStillWorks) {
  Json s = session(
      "old",
      Json::array({Json{
          {"command", "make"}, {"cwd", "/w"}, {"exit_code", 0}, {"status", "success"}, {"tool", "Bash"}}}),
      Json::array({Json{{"path", "/w/a.c"}, {"tool", "Edit"}, {"action", "modify"}}}));
  s.erase("action_times");
  const Json a = px::report::aggregate_activity(Json::array({s}));
  ASSERT_EQ(a["commands"].size(), 1u);
  EXPECT_TRUE(a["commands"][0]["at"].is_null());
  EXPECT_EQ(a["commands"][0]["files_changed"], Json::array());
  ASSERT_EQ(a["files_changed"].size(), 1u);
  EXPECT_TRUE(a["files_changed"][0]["at"].is_null());
  EXPECT_TRUE(a["files_changed"][0]["command"].is_null());
  const Json report{{"runs", Json::array({Json{{"id", "r"}, {"activity", a}}})}};
  const std::string text = px::report::render_terminal(report, false);
  EXPECT_NE(text.find("make"), std::string::npos) << text;
  EXPECT_EQ(text.find("changed:"), std::string::npos) << text;
  // Nothing without a time is put on the axis.
  EXPECT_TRUE(px::report::run_timeline(report["runs"][0], {}).items.empty());
}

// A harness plugin that writes each entry's time into the entry itself is read too.
TEST(ReportActivity, ATimeInTheEntryItselfCounts) {
  Json s = session("own", Json::array({command("make", nullptr)}), Json::array());
  s.erase("action_times");
  s["commands"][0]["at"] = "2026-11-20T10:00:00.000Z";
  const Json a = px::report::aggregate_activity(Json::array({s}));
  EXPECT_EQ(a["commands"][0]["at"], "2026-11-20T10:00:00.000Z");
}

// A link that names no command of its session (past its end, negative, not a
// number) links nothing: the change is kept, unlinked.
TEST(ReportActivity, ALinkToNoCommandOfItsSessionIsIgnored) {
  const Json sessions =
      Json::array({session("s1", Json::array({command("make", nullptr)}), Json::array()),
                   session("s2", Json::array({command("ls", nullptr)}),
                           Json::array({change("/w/a.c", nullptr, 1), change("/w/b.c", nullptr, -1),
                                        change("/w/c.c", nullptr, "0")}))});
  const Json a = px::report::aggregate_activity(sessions);
  ASSERT_EQ(a["files_changed"].size(), 3u);
  for (const auto& c : a["files_changed"]) EXPECT_TRUE(c["command"].is_null()) << c.dump();
  for (const auto& c : a["commands"]) EXPECT_TRUE(c["files_changed"].empty()) << c.dump();
}

// The same change recorded twice (two records of one patch) is listed once,
// with the time and the command the first lacked.
TEST(ReportActivity, ARepeatedChangeTakesWhatTheFirstLacked) {
  const Json sessions = Json::array(
      {session("s1", Json::array({command("apply", "2026-11-20T10:00:00.000Z")}),
               Json::array({change("/w/a.c", nullptr), change("/w/a.c", "2026-11-20T10:00:01.000Z", 0)}))});
  const Json a = px::report::aggregate_activity(sessions);
  ASSERT_EQ(a["files_changed"].size(), 1u);
  EXPECT_EQ(a["files_changed"][0]["at"], "2026-11-20T10:00:01.000Z");
  EXPECT_EQ(a["files_changed"][0]["command"], 0);
  EXPECT_EQ(a["commands"][0]["files_changed"], Json::array({"/w/a.c"}));
}

// The text view: each command's time, and under it the files it changed.
TEST(ReportActivity, TheTerminalShowsTimesAndWhatACommandChanged) {
  const Json report{
      {"runs",
       Json::array({Json{{"id", "r"}, {"activity", px::report::aggregate_activity(two_sessions())}}})}};
  const std::string text = px::report::render_terminal(report, false);
  const auto sed = text.find("10:02:00");
  ASSERT_NE(sed, std::string::npos) << text;
  const auto row = text.find("sed -i a.c", sed);
  ASSERT_NE(row, std::string::npos) << text;
  const auto note = text.find("changed: /w/a.c, /w/b.c", row);
  ASSERT_NE(note, std::string::npos) << text;
  // On the next line, in line with the COMMAND column.
  EXPECT_EQ(text.find('\n', row), text.rfind('\n', note)) << text;
  const auto column = [&](std::size_t at) { return at - text.rfind('\n', at) - 1; };
  EXPECT_EQ(column(note), column(text.find("COMMAND"))) << text;
  EXPECT_NE(text.find("changed: /w/c.c"), std::string::npos) << text;
  // A command without a time shows "-".
  const auto untimed = text.find("patch c.c");
  ASSERT_NE(untimed, std::string::npos);
  EXPECT_EQ(text.substr(text.rfind('\n', untimed) + 1, 3), "  -") << text;
  // The page: a column of them (its paths may break after a '/').
  std::string html = px::report::render_html(report);
  for (auto at = html.find("<wbr>"); at != std::string::npos; at = html.find("<wbr>", at)) html.erase(at, 5);
  EXPECT_NE(html.find("<th>Files it changed</th>"), std::string::npos);
  EXPECT_NE(html.find("data-label=\"Files it changed\">/w/a.c, /w/b.c</td>"), std::string::npos) << html;
}

// The timeline: commands, file changes and events on one axis in time order;
// a change carries the command that made it.
TEST(ReportTimeline, CommandsChangesAndEventsOnOneAxis) {
  const Json run{{"id", "r"}, {"activity", px::report::aggregate_activity(two_sessions())}};
  const std::vector<Json> events{Json{{"time", "2026-11-20T10:01:30.000Z"},
                                      {"type", "network.refused"},
                                      {"host", "evil.test"},
                                      {"port", 443}},
                                 Json{{"time", "2026-11-20T10:00:00.000Z"}, {"type", "run.start"}}};
  const auto t = px::report::run_timeline(run, events);
  std::vector<std::string> order;
  for (const auto& i : t.items)
    order.push_back(i["kind"].get<std::string>() + " " + i["text"].get<std::string>());
  const std::vector<std::string> want{
      "command run.start",  "command make",       "network network.refused evil.test",
      "command sed -i a.c", "file modify /w/a.c", "file modify /w/b.c",
      "command ls",         "file modify /w/d.c"};
  EXPECT_EQ(order, want);
  const Json& a = t.items[4];
  EXPECT_EQ(a["detail"]["command"], 1);
  EXPECT_EQ(a["detail"]["by_command"], "sed -i a.c");
  EXPECT_EQ(t.items[3]["detail"]["files_changed"], Json::array({"/w/a.c", "/w/b.c"}));
  EXPECT_TRUE(t.items[7]["detail"]["command"].is_null());
  ASSERT_EQ(t.hosts.size(), 1u);
  EXPECT_EQ(t.hosts[0]["host"], "evil.test");
}

// `parallex report` through the executable, on a run whose sessions were kept
// in its record (as before a rewind): the JSON links and the text's "changed:".
TEST(ReportActivity, TheReportCommandCarriesTheLinks) {
  const fs::path exe = fs::path(PARALLEX_BINARY_DIR) / "parallex";
  if (!fs::exists(exe)) GTEST_SKIP() << "the parallex executable was not built";
  Scratch scratch;
  Secrets secrets;
  SyntheticRun run;
  run.build(scratch.root, secrets);
  write_text(
      run.runs_dir / kRunId / px::report::kKeptSessionsFile,
      Json{{"kept_at", "2026-11-20T11:00:00.000Z"}, {"sessions", two_sessions()}, {"sources", Json::array()}}
          .dump());
  const std::string base = "'" + exe.string() + "' report --runs-dir '" + run.runs_dir.string() + "' ";
  const auto j = nlohmann::json::parse(sh_output(base + "--json 2>/dev/null"), nullptr, false);
  ASSERT_TRUE(j.is_object());
  const auto& activity = j["runs"][0]["activity"];
  EXPECT_EQ(activity["commands"][1]["files_changed"], nlohmann::json::array({"/w/a.c", "/w/b.c"}));
  EXPECT_EQ(activity["commands"][1]["at"], "2026-11-20T10:02:00.000Z");
  EXPECT_EQ(activity["files_changed"][2]["command"], 3);
  const std::string text = sh_output(base + "2>/dev/null");
  EXPECT_NE(text.find("changed: /w/a.c, /w/b.c"), std::string::npos) << text;
}
