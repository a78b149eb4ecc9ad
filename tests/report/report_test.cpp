// The report from a synthetic agent run: a run record, a proxy log, a real git
// repository with commits made after the refs at start (one signed with an SSH
// key), and the fixture transcripts of all three harnesses in the agent's home.
#include "report/report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include "common/redact.hpp"
#include "report/proxy_summary.hpp"
#include "report/time_text.hpp"
#include "report/views.hpp"
#include "test_paths.hpp"
#include "test_support.hpp"

using namespace px_test;
using px::report::Json;

namespace {

const px::pluginhost::PluginSet& plugin_set() {
  static const auto set = px::pluginhost::PluginSet::load({PARALLEX_PLUGIN_BUILD_DIR});
  return set;
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    px::register_secret(secrets.proxy_password);
    run.build(scratch.root, secrets);
  }
  px::report::ReportRequest request() const {
    px::report::ReportRequest req;
    req.agent = "reviewer";
    req.runs_dir = run.runs_dir;
    req.agent_home = run.home;
    if (!run.allowed_signers.empty()) req.allowed_signers = run.allowed_signers;
    req.plugins = &plugin_set();
    req.selection.last = true;
    return req;
  }
  static const Json* source(const Json& r, const std::string& name) {
    for (const auto& s : r["sources"])
      if (s["name"] == name) return &s;
    return nullptr;
  }
  bool has_plugin(const char* name) const {
    return plugin_set().find(name) && plugin_set().find(name)->has_transcripts();
  }

  Secrets secrets;
  Scratch scratch;
  SyntheticRun run;
};

}  // namespace

TEST(ReportTime, ParsesRecordTimesAndSince) {
  using namespace px::report;
  EXPECT_EQ(px::parse_iso_ms("1970-01-01T00:00:01.500Z"), 1500);
  EXPECT_EQ(px::parse_iso_ms("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(px::parse_iso_ms("1970-01-02"), 86'400'000);
  EXPECT_EQ(format_iso_ms(1500), "1970-01-01T00:00:01.500Z");
  EXPECT_FALSE(px::parse_iso_ms("yesterday"));
  EXPECT_FALSE(px::parse_iso_ms("2026-13-01"));
  EXPECT_EQ(parse_since("2h", 10'000'000).value(), 10'000'000 - 7'200'000);
  EXPECT_EQ(parse_since("1970-01-01T00:00:02Z", 0).value(), 2000);
  EXPECT_FALSE(parse_since("soon", 0));
}

TEST_F(Report, RunRecordFieldsAndWindowedSessions) {
  const Json rep = px::report::build_report(request());
  ASSERT_EQ(rep["schema"], px::report::kSchema);
  ASSERT_TRUE(rep["problems"].empty()) << rep["problems"].dump();
  ASSERT_EQ(rep["runs"].size(), 1u);
  const Json& r = rep["runs"][0];
  EXPECT_EQ(r["id"], kRunId);
  EXPECT_EQ(r["harness"], "claude-code");
  EXPECT_EQ(r["exit_status"], 0);
  EXPECT_EQ(r["duration_ms"], 300000);
  EXPECT_EQ(r["started_at"], kStart);
  if (!has_plugin("claude-code")) GTEST_SKIP() << "the claude-code plugin was not built with its parser";
  std::vector<std::string> ids;
  for (const auto& s : r["sessions"]) ids.push_back(s["session_id"]);
  // In the window: the 2026-11-20 Claude Code session and the planted one; the
  // 2025 session is not.
  EXPECT_NE(std::find(ids.begin(), ids.end(), "7c0e6f0a-2b1d-4c8e-9a43-5d2f8e1b6a90"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "5e55a0b1-0000-4000-8000-00000000beef"), ids.end());
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"), ids.end());
  if (has_plugin("codex")) {
    // Codex left transcripts in the same home: a run of one harness may start another.
    EXPECT_NE(std::find(ids.begin(), ids.end(), "01a1f866-0d00-7521-b45b-a2e11e1185d9"), ids.end());
    EXPECT_EQ(std::find(ids.begin(), ids.end(), "01a1feff-61c0-784d-9d6c-c0e48f2942e2"), ids.end());
  }
  const Json& activity = r["activity"];
  EXPECT_NE(
      std::find(activity["files_read"].begin(), activity["files_read"].end(), "/home/dev/api/package.json"),
      activity["files_read"].end());
  bool saw_failed_test = false;
  for (const auto& c : activity["commands"])
    if (c["command"] == "npm test -- --runInBand" && c["exit_code"] == 1 && c["status"] == "error")
      saw_failed_test = true;
  EXPECT_TRUE(saw_failed_test) << activity["commands"].dump(1);
  EXPECT_NE(std::find(activity["urls"].begin(), activity["urls"].end(),
                      "https://www.npmjs.com/package/express-rate-limit"),
            activity["urls"].end());
  const Json* t = source(r, "transcripts (claude-code)");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)["status"], "used") << (*t)["message"];
  EXPECT_NE((*t)["cannot_show"].get<std::string>().find("could have changed"), std::string::npos);
}

// The transcripts' times reach the report: each command at the time of the
// line that called it, in JSON and in the terminal's TIME column.
TEST_F(Report, CommandsAndChangesHaveTheirTranscriptsTimes) {
  if (!has_plugin("claude-code")) GTEST_SKIP() << "the claude-code plugin was not built with its parser";
  const Json rep = px::report::build_report(request());
  const Json& activity = rep["runs"][0]["activity"];
  const Json* planted = nullptr;
  for (const auto& c : activity["commands"])
    if (c["session_id"] == "5e55a0b1-0000-4000-8000-00000000beef") planted = &c;
  ASSERT_TRUE(planted) << activity["commands"].dump(1);
  EXPECT_EQ((*planted)["at"], "2026-11-20T10:04:01.000Z");
  EXPECT_EQ((*planted)["files_changed"], Json::array()) << "Claude Code's Bash names no file it changed";
  std::size_t timed = 0;
  for (const auto& c : activity["files_changed"]) {
    ASSERT_TRUE(c.contains("at") && c.contains("command")) << c.dump();
    if (c["at"].is_string()) ++timed;
  }
  EXPECT_GT(timed, 0u) << activity["files_changed"].dump(1);
  const std::string text = px::report::render_terminal(rep, false);
  EXPECT_NE(text.find("TIME      EXIT  STATUS"), std::string::npos) << text;
  EXPECT_NE(text.find("10:04:01"), std::string::npos) << text;
}

TEST_F(Report, HostsFromTheProxyLogWithABadLineSkipped) {
  const Json r = px::report::build_report(request())["runs"][0];
  const Json& hosts = r["hosts"];
  ASSERT_EQ(hosts["reached"].size(), 1u);
  EXPECT_EQ(hosts["reached"][0]["host"], "api.anthropic.com");
  EXPECT_EQ(hosts["reached"][0]["connections"], 2);
  EXPECT_EQ(hosts["reached"][0]["bytes_up"], 1024);
  EXPECT_EQ(hosts["reached"][0]["bytes_down"], 5120);
  ASSERT_EQ(hosts["refused"].size(), 2u);
  EXPECT_EQ(hosts["refused"][0]["host"], "evil.example.com");
  EXPECT_EQ(hosts["refused"][0]["reasons"][0], "host-not-allowed");
  ASSERT_EQ(hosts["failed"].size(), 1u);
  EXPECT_EQ(hosts["bad_lines"], 1);
  EXPECT_EQ(hosts["lines"], 6);
  const Json* p = source(r, "proxy log");
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)["status"], "partial");
  EXPECT_NE((*p)["message"].get<std::string>().find("1 of 6 lines"), std::string::npos);
}

TEST_F(Report, CommitsMadeAfterTheStartRefsWithSignatures) {
  const Json r = px::report::build_report(request())["runs"][0];
  const Json& commits = r["commits"];
  ASSERT_EQ(commits.size(), run.signed_commit ? 2u : 1u) << commits.dump(1);
  EXPECT_EQ(commits[0]["summary"], "add app");
  EXPECT_EQ(commits[0]["author"]["email"], "reviewer@example.com");
  EXPECT_EQ(commits[0]["signature"]["status"], "unsigned");
  ASSERT_EQ(commits[0]["files"].size(), 1u);
  EXPECT_EQ(commits[0]["files"][0]["path"], "src/app.txt");
  EXPECT_EQ(commits[0]["files"][0]["status"], "added");
  if (!run.signed_commit) GTEST_SKIP() << "ssh-keygen or git ssh signing is not available";
  EXPECT_EQ(commits[1]["summary"], "signed change");
  EXPECT_EQ(commits[1]["signature"]["status"], "verified") << commits[1]["signature"].dump();
  EXPECT_EQ(commits[1]["signature"]["signer"], "reviewer@example.com");
  EXPECT_EQ(commits[1]["files"][0]["status"], "modified");

  // Without the agent's allowed signers: signed, but not checked.
  auto req = request();
  req.allowed_signers.reset();
  const Json unverified = px::report::build_report(req)["runs"][0]["commits"][1]["signature"];
  EXPECT_EQ(unverified["status"], "signed, unverified");
  // Against another key: bad.
  sh("ssh-keygen -q -t ed25519 -N '' -C other -f '" + (scratch.root / "other").string() + "'");
  write_text(scratch.root / "other_signers",
             "reviewer@example.com namespaces=\"git\" " + read_text(scratch.root / "other.pub"));
  req.allowed_signers = scratch.root / "other_signers";
  EXPECT_EQ(px::report::build_report(req)["runs"][0]["commits"][1]["signature"]["status"], "bad");
}

TEST_F(Report, EverySecretShapeIsRedactedInEveryView) {
  const Json rep = px::report::build_report(request());
  const std::string json = rep.dump();
  const std::string terminal = px::report::render_terminal(rep, false);
  const std::string coloured = px::report::render_terminal(rep, true);
  const std::string html = px::report::render_html(rep);
  for (const auto& secret : secrets.raw()) {
    EXPECT_EQ(json.find(secret), std::string::npos) << "JSON holds " << secret;
    EXPECT_EQ(terminal.find(secret), std::string::npos) << "terminal view holds " << secret;
    EXPECT_EQ(coloured.find(secret), std::string::npos) << "terminal view holds " << secret;
    EXPECT_EQ(html.find(secret), std::string::npos) << "HTML holds " << secret;
  }
  // The markers show that something was there.
  for (const char* marker : {"[REDACTED:github-token]", "[REDACTED:anthropic-key]", "[REDACTED:openai-key]",
                             "[REDACTED:aws-access-key]", "[REDACTED:aws-secret-key]",
                             "[REDACTED:private-key]", "[REDACTED:url-password]", "[REDACTED:secret]"})
    EXPECT_NE(json.find(marker), std::string::npos) << marker;
  // The planted secrets reached the report through each source.
  const Json& r = rep["runs"][0];
  EXPECT_NE(r["command"].get<std::string>().find("[REDACTED:github-token]"), std::string::npos);
  EXPECT_NE(r["hosts"]["refused"][1]["host"].get<std::string>().find("[REDACTED:github-token]"),
            std::string::npos);
  EXPECT_NE(r["commits"][0]["message"].get<std::string>().find("[REDACTED:openai-key]"), std::string::npos);
}

TEST_F(Report, TerminalViewNeverPassesControlCharacters) {
  const Json rep = px::report::build_report(request());
  const std::string plain = px::report::render_terminal(rep, false);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_EQ(plain.find('\x07'), std::string::npos);
  if (has_plugin("claude-code")) {
    EXPECT_NE(plain.find("\\x1b]0;pwned\\x07"), std::string::npos);
  }
  for (const char* section :
       {"Sessions", "Files read", "Files changed", "Commands", "URLs", "Hosts", "Commits", "Sources"})
    EXPECT_NE(plain.find(section), std::string::npos) << section;
  const std::string coloured = px::report::render_terminal(rep, true);
  EXPECT_NE(coloured.find("\033[1;36m"), std::string::npos);
  // Only our own colour codes: the planted OSC sequence stays escaped.
  EXPECT_EQ(coloured.find("\x1b]0;"), std::string::npos);
}

// Coloured cells take the width of their text: with the colour codes taken
// out, the coloured view is the plain one, columns and all.
TEST_F(Report, ColourChangesNoColumnWidth) {
  const Json rep = px::report::build_report(request());
  const std::string coloured = px::report::render_terminal(rep, true);
  ASSERT_NE(coloured.find("\033[32m"), std::string::npos) << "no coloured cell to line up";
  const std::string stripped = std::regex_replace(coloured, std::regex("\x1b\\[[0-9;]*m"), "");
  EXPECT_EQ(stripped, px::report::render_terminal(rep, false));
}

// A cell wider than its column (a long working folder) moves the rest of its row
// to the next line, so the COMMAND column stays in line; searches are a section
// of their own, not rows under "URLs (0)".
TEST_F(Report, LongCellsKeepTheColumnsInLineAndSearchesHaveTheirOwnSection) {
  Json rep = px::report::build_report(request());
  ASSERT_FALSE(rep["runs"].empty());
  Json& activity = rep["runs"][0]["activity"];
  const std::string deep = "/home/dev/" + std::string(60, 'd') + "/project";
  activity["commands"] = Json::array({Json{{"command", "make px-test"},
                                           {"cwd", "/w"},
                                           {"exit_code", 0},
                                           {"status", "success"},
                                           {"tool", "Bash"}},
                                      Json{{"command", "make px-lint"},
                                           {"cwd", deep},
                                           {"exit_code", 2},
                                           {"status", "error"},
                                           {"tool", "Bash"}},
                                      Json{{"command", "ls px-src"},
                                           {"cwd", "/w/src"},
                                           {"exit_code", 0},
                                           {"status", "success"},
                                           {"tool", "Bash"}}});
  activity["urls"] = Json::array();
  activity["web_searches"] = Json::array({"asio strand"});
  const std::string text = px::report::render_terminal(rep, false);
  const auto column_of = [&](const std::string& needle) -> std::size_t {
    const auto at = text.find(needle);
    if (at == std::string::npos) return std::string::npos;
    const auto line_start = text.rfind('\n', at);
    return at - (line_start == std::string::npos ? 0 : line_start + 1);
  };
  const std::size_t header = column_of("COMMAND");
  ASSERT_NE(header, std::string::npos) << text;
  EXPECT_EQ(column_of("make px-test"), header) << text;
  EXPECT_EQ(column_of("make px-lint"), header) << text;
  EXPECT_EQ(column_of("ls px-src"), header) << text;
  EXPECT_NE(text.find(deep), std::string::npos) << "the long folder is shown whole";
  EXPECT_NE(text.find("URLs (0)"), std::string::npos) << text;
  EXPECT_EQ(text.find("search: "), std::string::npos) << text;
  EXPECT_NE(text.find("Web searches (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("asio strand"), std::string::npos) << text;
}

// Narrow windows and dark mode: the page says how it lays out on both.
TEST_F(Report, HtmlReadsOnANarrowWindowAndInTheDark) {
  const std::string html = px::report::render_html(px::report::build_report(request()));
  EXPECT_NE(html.find("@media (max-width:720px)"), std::string::npos);
  EXPECT_NE(html.find("@media (prefers-color-scheme:dark)"), std::string::npos);
  EXPECT_NE(html.find("color-scheme:light dark"), std::string::npos);
  // Nothing breaks inside a word: ids never wrap, paths only after a '/'.
  EXPECT_EQ(html.find("break-all"), std::string::npos);
  EXPECT_NE(html.find("<h2>Run <span class=\"id\">"), std::string::npos);
  EXPECT_NE(html.find("data-label=\"Path\""), std::string::npos);
  EXPECT_NE(html.find("/<wbr>"), std::string::npos);
}

TEST_F(Report, AMissingHomeMarksTheTranscriptsMissingAndKeepsTheRest) {
  run.record["policy"]["run_home"] = (scratch.root / "no-such-home").string();
  run.write_record();
  const Json r = px::report::build_report(request())["runs"][0];
  const Json* t = source(r, "transcripts (claude-code)");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)["status"], "missing");
  EXPECT_NE((*t)["message"].get<std::string>().find("does not exist"), std::string::npos);
  EXPECT_TRUE(r["sessions"].empty());
  EXPECT_FALSE(r["commits"].empty());
  EXPECT_FALSE(r["hosts"]["reached"].empty());
  EXPECT_FALSE(r["warnings"].empty());
}

TEST_F(Report, AHomeWithoutTheHarnessFolderMarksItMissing) {
  fs::remove_all(run.home / ".claude");
  const Json r = px::report::build_report(request())["runs"][0];
  const Json* t = source(r, "transcripts (claude-code)");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)["status"], "missing");
  EXPECT_NE((*t)["message"].get<std::string>().find(".claude/projects"), std::string::npos);
}

TEST_F(Report, AnUnreadableTranscriptFolderIsMarked) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any folder, so it cannot be made unreadable here";
  fs::permissions(run.home / ".claude/projects", fs::perms::none);
  const Json r = px::report::build_report(request())["runs"][0];
  const Json* t = source(r, "transcripts (claude-code)");
  ASSERT_TRUE(t);
  EXPECT_NE((*t)["status"], "used");
  fs::permissions(run.home / ".claude/projects", fs::perms::owner_all);
}

TEST_F(Report, ACorruptOpencodeDatabaseIsMarkedAndTheRestProduced) {
  if (!has_plugin("opencode")) GTEST_SKIP() << "the opencode plugin was not built with its parser";
  write_text(run.home / ".local/share/opencode/opencode.db", std::string(4096, 'x'));
  const Json r = px::report::build_report(request())["runs"][0];
  const Json* t = source(r, "transcripts (opencode)");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)["status"], "partial") << t->dump();
  EXPECT_NE((*t)["message"].get<std::string>().find("opencode.db"), std::string::npos) << t->dump();
  EXPECT_FALSE(r["sessions"].empty());
}

TEST_F(Report, ALockedOpencodeDatabaseIsMarked) {
  if (!has_plugin("opencode")) GTEST_SKIP() << "the opencode plugin was not built with its parser";
  const std::string sqlite = find_tool({"sqlite3"});
  if (sqlite.empty())
    GTEST_SKIP() << "the sqlite3 shell is not installed (needed to hold a lock from another process)";
  const fs::path db = run.home / ".local/share/opencode/opencode.db";
  sh("'" + sqlite + "' '" + db.string() +
     "' 'CREATE TABLE session(id TEXT); CREATE TABLE message(id TEXT); CREATE TABLE part(id TEXT);'");
  // Another process holds an exclusive lock while the report reads.
  sh("( (echo 'BEGIN EXCLUSIVE;'; sleep 12) | '" + sqlite + "' '" + db.string() + "' ) >/dev/null 2>&1 &");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const Json r = px::report::build_report(request())["runs"][0];
  const Json* t = source(r, "transcripts (opencode)");
  ASSERT_TRUE(t);
  EXPECT_NE((*t)["status"], "used") << t->dump();
  EXPECT_FALSE(r["sessions"].empty());
}

// A damaged record is not a run with everything unknown: it is named, with
// its file, among the report's problems, and skipped.
TEST_F(Report, ADamagedRunRecordIsNamedAndSkipped) {
  const fs::path file = run.runs_dir / kRunId / "run.json";
  write_text(file, "{ not json");
  const Json rep = px::report::build_report(request());
  EXPECT_TRUE(rep["runs"].empty()) << rep["runs"].dump(2);
  ASSERT_FALSE(rep["problems"].empty());
  const std::string problem = rep["problems"][0];
  EXPECT_NE(problem.find(file.string()), std::string::npos) << problem;
  EXPECT_NE(problem.find("is damaged: it is not valid JSON"), std::string::npos) << problem;
  EXPECT_EQ(read_text(file), "{ not json");
}

TEST_F(Report, AnUnknownRunIdIsAProblemNamingTheKnownOnes) {
  auto req = request();
  req.selection.last = false;
  req.selection.run_id = "20990101-000000-ffff";
  const Json rep = px::report::build_report(req);
  EXPECT_TRUE(rep["runs"].empty());
  ASSERT_EQ(rep["problems"].size(), 1u);
  const std::string p = rep["problems"][0];
  EXPECT_NE(p.find("no run 20990101-000000-ffff"), std::string::npos) << p;
  EXPECT_NE(p.find(kRunId), std::string::npos) << p;
  req.selection.run_id = "../../etc";
  EXPECT_TRUE(px::report::build_report(req)["runs"].empty());
}

TEST_F(Report, SinceSelectsRunsThatEndedAfterIt) {
  auto req = request();
  req.selection.last = false;
  req.selection.since_ms = *px::parse_iso_ms("2026-11-20T10:04:00Z");
  EXPECT_EQ(px::report::build_report(req)["runs"].size(), 1u);
  req.selection.since_ms = *px::parse_iso_ms("2026-11-21T00:00:00Z");
  const Json rep = px::report::build_report(req);
  EXPECT_TRUE(rep["runs"].empty());
  EXPECT_FALSE(rep["problems"].empty());
}

TEST_F(Report, AnOfflineRunHasNoProxySource) {
  run.record["proxy_log"] = "";
  run.record["network"] = "offline";
  run.write_record();
  fs::remove(run.runs_dir / kRunId / "proxy.jsonl");
  const Json r = px::report::build_report(request())["runs"][0];
  EXPECT_EQ((*source(r, "proxy log"))["status"], "none");
}

TEST_F(Report, AMissingProxyLogIsMarkedMissing) {
  fs::remove(run.runs_dir / kRunId / "proxy.jsonl");
  const Json r = px::report::build_report(request())["runs"][0];
  EXPECT_EQ((*source(r, "proxy log"))["status"], "missing");
  EXPECT_FALSE(r["commits"].empty());
}

TEST_F(Report, ARunFolderOutsideGitIsNotAnError) {
  run.record["run_folder"] = scratch.root.string();
  run.record.erase("refs_start");
  run.write_record();
  const Json r = px::report::build_report(request())["runs"][0];
  EXPECT_EQ((*source(r, "git"))["status"], "none");
  EXPECT_TRUE(r["commits"].empty());
}

// The broker's request log (docs/broker.md): requests per terminated host,
// exfiltration attempts and refused connections, in the JSON and both views;
// a line that is not a request line is skipped and said.
TEST_F(Report, RequestsFromTheBrokersLogWithABadLineSkipped) {
  const auto dir = run.runs_dir / px_test::kRunId;
  write_text(
      dir / "requests.jsonl",
      R"({"host":"github.com","port":443,"method":"GET","path":"/o/r.git/info/refs?[query]","status":200,"verdict":"allowed","reason":"allowed","credentials":"github","bytes_up":0,"bytes_down":300}
{"host":"github.com","port":443,"method":"POST","path":"/other/r.git/git-receive-pack","status":403,"verdict":"denied","reason":"request-rule-denied","bytes_up":0,"bytes_down":0}
{"host":"gist.example","port":443,"method":"POST","path":"/","status":403,"verdict":"denied","reason":"credential-exfiltration","detail":"placeholder of credential github in the request body"}
{"host":"gist.example","port":443,"method":"POST","path":"/","status":403,"verdict":"denied","reason":"credential-exfiltration","detail":"placeholder of credential github in the request body"}
{"host":"pinned.example","port":443,"verdict":"denied","reason":"client-refused-run-ca"}
not json
{"host":"<b>x</b>.example","port":443,"method":"GET","path":"/","status":200,"verdict":"allowed","reason":"allowed","bytes_up":7,"bytes_down":9}
)");
  const Json report = px::report::build_report(request());
  const Json& r = report["runs"][0];
  ASSERT_TRUE(r.contains("requests")) << r.dump(2);
  const Json& q = r["requests"];
  ASSERT_EQ(q["hosts"].size(), 3u) << q.dump(2);
  EXPECT_EQ(q["hosts"][0]["host"], "github.com");
  EXPECT_EQ(q["hosts"][0]["requests"], 2);
  EXPECT_EQ(q["hosts"][0]["refused"], 1);
  EXPECT_EQ(q["hosts"][0]["bytes_down"], 300);
  EXPECT_EQ(q["hosts"][0]["credentials"], Json::array({"github"}));
  EXPECT_EQ(q["hosts"][0]["reasons"], Json::array({"request-rule-denied"}));
  EXPECT_EQ(q["hosts"][1]["host"], "gist.example");
  EXPECT_EQ(q["hosts"][1]["refused"], 2);
  ASSERT_EQ(q["exfiltration"].size(), 1u);
  EXPECT_EQ(q["exfiltration"][0]["count"], 2);
  EXPECT_EQ(q["exfiltration"][0]["detail"], "placeholder of credential github in the request body");
  ASSERT_EQ(q["connections_refused"].size(), 1u);
  EXPECT_EQ(q["connections_refused"][0]["reason"], "client-refused-run-ca");
  EXPECT_EQ(q["bad_lines"], 1);
  const Json* s = source(r, "request log");
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)["status"], "partial");

  const std::string text = px::report::render_terminal(report, false);
  EXPECT_NE(text.find("Requests (terminated hosts)"), std::string::npos) << text;
  EXPECT_NE(text.find("EXFILTRATION ATTEMPT refused: gist.example"), std::string::npos) << text;
  EXPECT_NE(text.find("connection refused: pinned.example client-refused-run-ca"), std::string::npos) << text;
  const std::string html = px::report::render_html(report);
  EXPECT_NE(html.find("Exfiltration attempt refused: gist.example"), std::string::npos);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos) << "every value is escaped";
  EXPECT_NE(html.find("&lt;b&gt;x&lt;/b&gt;"), std::string::npos);
}

TEST_F(Report, ARunWithABrokerWhoseLogIsGoneSaysSo) {
  run.record["broker"] = {{"request_log", (run.runs_dir / px_test::kRunId / "requests.jsonl").string()}};
  run.write_record();
  const Json r = px::report::build_report(request())["runs"][0];
  ASSERT_TRUE(r.contains("requests"));
  EXPECT_TRUE(r["requests"]["hosts"].empty());
  const Json* s = source(r, "request log");
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)["status"], "missing");
}

TEST_F(Report, ARunWithoutABrokerHasNoRequestSection) {
  const Json r = px::report::build_report(request())["runs"][0];
  EXPECT_FALSE(r.contains("requests"));
  EXPECT_EQ(source(r, "request log"), nullptr);
}
