// What real transcript files hold besides the happy path: partial and corrupt lines,
// unknown records, huge lines, copies of tool calls in progress records, old and new
// field names, and paths that are missing or unreadable.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.hpp"
#include "parallex_transcripts/claude_code.hpp"
#include "parallex_transcripts/codex.hpp"
#include "parallex_transcripts/opencode.hpp"

namespace tx = parallex::transcripts;
using nlohmann::json;

namespace {

const char* kSid = "11111111-2222-3333-4444-555555555555";

json claude_line(const std::string& type, const std::string& ts, json message, json extra = json::object()) {
  json j = {{"type", type},
            {"sessionId", kSid},
            {"timestamp", ts},
            {"cwd", "/work/proj"},
            {"isSidechain", false},
            {"uuid", ts},
            {"message", std::move(message)}};
  for (auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

json tool_use(const std::string& id, const std::string& name, json input,
              const std::string& msg_id = "msg_1") {
  return {{"role", "assistant"},
          {"id", msg_id},
          {"model", "claude-test"},
          {"content",
           json::array({{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", std::move(input)}}})},
          {"usage", {{"input_tokens", 1}, {"output_tokens", 2}}}};
}

json tool_result(const std::string& id, const std::string& content, bool is_error = false) {
  json block = {{"type", "tool_result"}, {"tool_use_id", id}, {"content", content}};
  if (is_error) block["is_error"] = true;
  return {{"role", "user"}, {"content", json::array({block})}};
}

std::string lines(std::initializer_list<std::string> ls) {
  std::string out;
  for (const auto& l : ls) out += l + "\n";
  return out;
}

const json& only_session(const tx::ParseResult& r) {
  EXPECT_EQ(r.sessions.size(), 1u);
  static const json empty = json::object();
  return r.sessions.empty() ? empty : r.sessions.front();
}

}  // namespace

TEST(ClaudeRobustness, TruncatedLastAndCorruptMiddleLinesAreSkippedAndCounted) {
  px_test::TempDir dir;
  std::string content = lines(
      {claude_line("assistant", "2026-01-01T00:00:00.000Z", tool_use("t1", "Bash", {{"command", "make"}}))
           .dump(),
       "{\"type\":\"user\",\"sessionId\":\"" + std::string(kSid) + "\",\"message\":{\"content\":[{\"ty",
       claude_line("user", "2026-01-01T00:00:01.000Z", tool_result("t1", "ok")).dump(),
       claude_line("assistant", "2026-01-01T00:00:02.000Z",
                   tool_use("t2", "Read", {{"file_path", "src/a.c"}}, "msg_2"))
           .dump()});
  content +=
      "{\"type\":\"user\",\"sessionId\":\"" + std::string(kSid) + "\",\"timestamp\":\"2026-01-01T00:00:09";
  dir.file(std::string("projects/-work-proj/") + kSid + ".jsonl", content);
  auto r = tx::claude_code::parse({dir.path()});
  EXPECT_TRUE(r.warnings.empty());
  const json& s = only_session(r);
  EXPECT_EQ(s["malformed_lines"], 2);
  ASSERT_EQ(s["commands"].size(), 1u);
  EXPECT_EQ(s["commands"][0]["status"], "success");
  EXPECT_EQ(s["files_read"], json::array({"/work/proj/src/a.c"}));
  EXPECT_EQ(s["ended_at"], "2026-01-01T00:00:02.000Z");
  EXPECT_EQ(s["token_usage"]["input_tokens"], 2);
}

// A line of millions of tiny values is read like any other line: what parsing it costs is
// bounded by its length (lines are at most 64 MiB); the lines around it are read as usual.
TEST(ClaudeRobustness, ALineOfMillionsOfValuesIsRead) {
  px_test::TempDir dir;
  std::string values;
  values.reserve(2 * 1100000);
  for (int i = 0; i < 1100000; ++i) values += "0,";
  values += "0";
  std::string content = lines(
      {claude_line("assistant", "2026-01-01T00:00:00.000Z", tool_use("t1", "Bash", {{"command", "make"}}))
           .dump(),
       "{\"type\":\"user\",\"sessionId\":\"" + std::string(kSid) + "\",\"message\":{\"content\":[" + values +
           "]}}",
       claude_line("user", "2026-01-01T00:00:01.000Z", tool_result("t1", "ok")).dump()});
  dir.file(std::string("projects/-work-proj/") + kSid + ".jsonl", content);
  auto r = tx::claude_code::parse({dir.path()});
  const json& s = only_session(r);
  EXPECT_EQ(s["malformed_lines"], 0);
  ASSERT_EQ(s["commands"].size(), 1u);
  EXPECT_EQ(s["commands"][0]["status"], "success");
}

// A line longer than 64 MiB is counted malformed without being kept whole; the next one is read.
TEST(ClaudeRobustness, ALineOverTheLimitIsMalformed) {
  px_test::TempDir dir;
  const std::string big((std::size_t{64} << 20) + 1, 'x');
  dir.file(
      std::string("projects/-work-proj/") + kSid + ".jsonl",
      lines(
          {claude_line("assistant", "2026-01-01T00:00:00.000Z",
                       tool_use("w1", "Write", {{"file_path", "/work/proj/big.txt"}, {"content", big}}))
               .dump(),
           claude_line("assistant", "2026-01-01T00:00:01.000Z", tool_use("t1", "Bash", {{"command", "make"}}))
               .dump()}));
  auto r = tx::claude_code::parse({dir.path()});
  const json& s = only_session(r);
  EXPECT_EQ(s["malformed_lines"], 1);
  EXPECT_TRUE(s["files_changed"].empty());
  ASSERT_EQ(s["commands"].size(), 1u);
}

// Strings keep what their writer meant: bytes that are not UTF-8 and \u escapes of half a
// surrogate pair become U+FFFD, a whole pair its character, and the rest of the line counts.
TEST(ClaudeRobustness, InvalidUtf8AndUnpairedSurrogatesBecomeReplacementCharacters) {
  px_test::TempDir dir;
  auto bash_line = [](const std::string& ts, const std::string& id, const std::string& raw_command) {
    // The command's JSON text is spliced in as written (nlohmann would escape it): a marker
    // string stands in its place first.
    const std::string marker = "RAW-COMMAND-GOES-HERE";
    std::string line = claude_line("assistant", ts, tool_use(id, "Bash", {{"command", marker}}, id)).dump();
    line.replace(line.find('"' + marker + '"') + 1, marker.size(), raw_command);
    return line;
  };
  dir.file(std::string("projects/-work-proj/") + kSid + ".jsonl",
           lines({bash_line("2026-01-01T00:00:00.000Z", "a", "echo \xff\xfe caf\xc3\xa9"),
                  bash_line("2026-01-01T00:00:01.000Z", "b", "echo \\ud800 x \\udc00 y \\ud800\\u0041"),
                  bash_line("2026-01-01T00:00:02.000Z", "c", "echo \\ud83d\\ude00 \\\\ud800"),
                  // Outside a string, a byte that is not UTF-8 leaves the line malformed.
                  "{\"type\":\"user\",\"sessionId\":\"" + std::string(kSid) + "\",\"x\":\xff}"}));
  auto r = tx::claude_code::parse({dir.path()});
  const json& s = only_session(r);
  EXPECT_EQ(s["malformed_lines"], 1);
  ASSERT_EQ(s["commands"].size(), 3u);
  EXPECT_EQ(s["commands"][0]["command"], "echo \xEF\xBF\xBD\xEF\xBF\xBD caf\xc3\xa9");
  EXPECT_EQ(s["commands"][1]["command"],
            "echo \xEF\xBF\xBD x \xEF\xBF\xBD y \xEF\xBF\xBD"
            "A");
  EXPECT_EQ(s["commands"][2]["command"], "echo \xF0\x9F\x98\x80 \\ud800");
  EXPECT_NO_THROW((void)s.dump());
}

TEST(ClaudeRobustness, UnknownRecordTypesAndProgressCopiesAreNotActions) {
  px_test::TempDir dir;
  // A 2.1 progress record embeds a copy of a subagent's tool_use: not an action of its own.
  json progress = {
      {"type", "progress"},
      {"sessionId", kSid},
      {"timestamp", "2026-01-01T00:00:05.000Z"},
      {"data",
       {{"type", "agent_progress"},
        {"message",
         {{"type", "assistant"}, {"message", tool_use("t9", "Bash", {{"command", "rm -rf /"}})}}}}}};
  json unknown = {{"type", "brand-new-record"},
                  {"sessionId", kSid},
                  {"timestamp", "2026-01-01T00:00:07.000Z"},
                  {"payload", {{"tool_use", {{"name", "Write"}}}}}};
  json snapshot = {{"type", "file-history-snapshot"},
                   {"snapshot", {{"trackedFileBackups", {{"/work/proj/x", json::object()}}}}}};
  json summary = {{"type", "summary"}, {"summary", "whatever"}, {"leafUuid", "x"}};
  dir.file(
      std::string("projects/p/") + kSid + ".jsonl",
      lines({claude_line("user", "2026-01-01T00:00:00.000Z", {{"role", "user"}, {"content", "hi"}}).dump(),
             progress.dump(), unknown.dump(), snapshot.dump(), summary.dump()}));
  auto r = tx::claude_code::parse({dir.path()});
  const json& s = only_session(r);
  EXPECT_TRUE(s["commands"].empty());
  EXPECT_TRUE(s["files_changed"].empty());
  EXPECT_EQ(s["malformed_lines"], 0);
  EXPECT_EQ(s["started_at"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(s["ended_at"], "2026-01-01T00:00:07.000Z");  // other records still count for the session's time
  EXPECT_TRUE(s["token_usage"].is_null());
}

TEST(ClaudeRobustness, HugeLineIsParsed) {
  px_test::TempDir dir;
  std::string big(20u << 20, 'x');
  dir.file(
      std::string("projects/p/") + kSid + ".jsonl",
      lines({claude_line("assistant", "2026-01-01T00:00:00.000Z",
                         tool_use("w1", "Write", {{"file_path", "/work/proj/big.txt"}, {"content", big}}))
                 .dump(),
             claude_line("user", "2026-01-01T00:00:01.000Z",
                         tool_result("w1", "File created successfully at: x"),
                         {{"toolUseResult", {{"type", "create"}, {"content", big}}}})
                 .dump()}));
  auto r = tx::claude_code::parse({dir.path()});
  const json& s = only_session(r);
  ASSERT_EQ(s["files_changed"].size(), 1u);
  EXPECT_EQ(s["files_changed"][0]["action"], "create");
}

TEST(ClaudeRobustness, ErrorsExitCodesAndOldNames) {
  px_test::TempDir dir;
  json rci = {{"stdout", ""}, {"returnCodeInterpretation", "No matches found"}};
  dir.file(
      std::string("projects/p/") + kSid + ".jsonl",
      lines(
          {claude_line("assistant", "2026-01-01T00:00:00.000Z", tool_use("a", "Bash", {{"command", "false"}}))
               .dump(),
           claude_line("user", "2026-01-01T00:00:01.000Z", tool_result("a", "Exit code 7\nboom", true),
                       {{"toolUseResult", "Error: Exit code 7\nboom"}})
               .dump(),
           claude_line("assistant", "2026-01-01T00:00:02.000Z",
                       tool_use("b", "Bash", {{"command", "grep x y"}}, "msg_2"))
               .dump(),
           claude_line("user", "2026-01-01T00:00:03.000Z", tool_result("b", ""), {{"toolUseResult", rci}})
               .dump(),
           claude_line("assistant", "2026-01-01T00:00:04.000Z",
                       tool_use("c", "Bash", {{"command", "sleep 999"}}, "msg_3"))
               .dump(),
           claude_line("user", "2026-01-01T00:00:05.000Z",
                       tool_result("c", "[Request interrupted by user for tool use]", true))
               .dump(),
           claude_line("assistant", "2026-01-01T00:00:06.000Z",
                       tool_use("d", "NotebookEdit", {{"notebook_path", "nb.ipynb"}}, "msg_4"))
               .dump(),
           // 1.x Write result is only text.
           claude_line("assistant", "2026-01-01T00:00:07.000Z",
                       tool_use("e", "Write", {{"file_path", "/n.txt"}}, "msg_5"))
               .dump(),
           claude_line("user", "2026-01-01T00:00:08.000Z",
                       tool_result("e", "File created successfully at: /n.txt"))
               .dump(),
           claude_line("assistant", "2026-01-01T00:00:09.000Z",
                       tool_use("f", "WebFetch", {{"url", "https://bad.example"}}, "msg_6"))
               .dump(),
           claude_line("user", "2026-01-01T00:00:10.000Z", tool_result("f", "fetch failed", true)).dump()}));
  auto r = tx::claude_code::parse({dir.path()});
  const json& s = only_session(r);
  ASSERT_EQ(s["commands"].size(), 3u);
  EXPECT_EQ(s["commands"][0]["exit_code"], 7);
  EXPECT_EQ(s["commands"][0]["status"], "error");
  EXPECT_TRUE(s["commands"][1]["exit_code"].is_null());
  EXPECT_EQ(s["commands"][1]["status"], "success");
  EXPECT_TRUE(s["commands"][2]["exit_code"].is_null());
  EXPECT_EQ(s["commands"][2]["status"], "error");
  ASSERT_EQ(s["files_changed"].size(), 2u);
  EXPECT_EQ(s["files_changed"][0]["path"], "/work/proj/nb.ipynb");
  EXPECT_EQ(s["files_changed"][1]["action"], "create");
  EXPECT_TRUE(s["urls"].empty());
  EXPECT_EQ(s.count("sidechain"), 0u);
}

TEST(ClaudeRobustness, UsageCountsOnceAcrossFilesAndThreads) {
  px_test::TempDir dir;
  // The same API message (id + requestId) logged in two files of one session counts once.
  json main_line = claude_line("assistant", "2026-01-01T00:00:00.000Z",
                               tool_use("t1", "Read", {{"file_path", "/a"}}), {{"requestId", "req_1"}});
  json side_line =
      claude_line("assistant", "2026-01-01T00:00:01.000Z", tool_use("t2", "Read", {{"file_path", "/b"}}),
                  {{"requestId", "req_1"}, {"isSidechain", true}, {"agentId", "agent7"}});
  dir.file(std::string("projects/p/") + kSid + ".jsonl", main_line.dump() + "\n");
  dir.file(std::string("projects/p/") + kSid + "/subagents/agent-agent7.jsonl", side_line.dump() + "\n");
  for (const char* threads : {"1", "2"}) {
    setenv("PARALLEX_TRANSCRIPT_THREADS", threads, 1);
    auto r = tx::claude_code::parse({dir.path()});
    const json& s = only_session(r);
    EXPECT_EQ(s["token_usage"]["input_tokens"], 1) << threads;
    EXPECT_EQ(s["files_read"], json::array({"/a", "/b"})) << threads;
    EXPECT_EQ(s["sidechain"]["subagent_ids"], json::array({"agent7"})) << threads;
    EXPECT_EQ(s["source_files"].size(), 2u) << threads;
  }
  unsetenv("PARALLEX_TRANSCRIPT_THREADS");
}

// One thread reads file after file with the same buffer and parser: nothing of a file (a line that
// grew the buffer, a last line cut short) reaches the next one.
TEST(ClaudeRobustness, FilesReadOneAfterAnotherOnOneThreadShareNothing) {
  px_test::TempDir dir;
  const std::string other = "99999999-2222-3333-4444-555555555555";
  const std::string big(3u << 20, 'x');
  json first = claude_line("assistant", "2026-01-01T00:00:00.000Z",
                           tool_use("w1", "Write", {{"file_path", "/work/proj/big.txt"}, {"content", big}}));
  dir.file("projects/p/a.jsonl",
           first.dump() + "\n{\"type\":\"user\",\"sessionId\":\"" + std::string(kSid) + "\",\"mess");
  json second =
      claude_line("assistant", "2026-01-01T00:00:01.000Z", tool_use("t1", "Bash", {{"command", "make"}}));
  second["sessionId"] = other;
  dir.file("projects/p/b.jsonl", second.dump() + "\n");
  setenv("PARALLEX_TRANSCRIPT_THREADS", "1", 1);
  auto r = tx::claude_code::parse({dir.path()});
  unsetenv("PARALLEX_TRANSCRIPT_THREADS");
  ASSERT_EQ(r.sessions.size(), 2u);
  const json& a = r.sessions[0];
  const json& b = r.sessions[1];
  EXPECT_EQ(a["session_id"], kSid);
  EXPECT_EQ(a["malformed_lines"], 1);
  ASSERT_EQ(a["files_changed"].size(), 1u);
  EXPECT_EQ(a["files_changed"][0]["path"], "/work/proj/big.txt");
  EXPECT_EQ(b["session_id"], other);
  EXPECT_EQ(b["malformed_lines"], 0);
  ASSERT_EQ(b["commands"].size(), 1u);
  EXPECT_EQ(b["commands"][0]["command"], "make");
}

TEST(ClaudeRobustness, GarbageNeverCrashes) {
  px_test::TempDir dir;
  std::string deep(200000, '[');
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>(i * 37));
  dir.file("projects/p/a.jsonl", deep + "\n" + binary + "\n\n   \n{\"sessionId\":7}\n[1,2]\n\"str\"\n");
  dir.file("projects/p/empty.jsonl", "");
  auto r = tx::claude_code::parse({dir.path()});
  EXPECT_TRUE(r.sessions.empty());
  EXPECT_FALSE(r.warnings.empty());  // malformed lines with no session to count them in
}

TEST(Robustness, MissingAndUnreadablePathsWarn) {
  px_test::TempDir dir;
  std::string missing = dir.path() + "/nope";
  for (auto* parse : {&tx::claude_code::parse, &tx::codex::parse, &tx::opencode::parse}) {
    auto r = (*parse)({missing}, {}, tx::Form::object);
    EXPECT_TRUE(r.sessions.empty());
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].path, missing);
    EXPECT_NE(r.warnings[0].message.find("does not exist"), std::string::npos);
  }
  // A FIFO must not block the parser.
  std::string fifo = dir.path() + "/pipe.jsonl";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(tx::claude_code::parse({fifo}).warnings.size(), 1u);
  EXPECT_EQ(tx::codex::parse({fifo}).warnings.size(), 1u);
  EXPECT_EQ(tx::opencode::parse({fifo}).warnings.size(), 1u);
}

TEST(Robustness, UnreadableFileWarns) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: file permissions do not stop reads";
  px_test::TempDir dir;
  std::string locked = dir.file("projects/p/x.jsonl", "{}\n");
  chmod(locked.c_str(), 0);
  auto r = tx::claude_code::parse({locked});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].message.find("Cannot open"), std::string::npos);
}

// ---- Codex ----------------------------------------------------------------------

namespace {

std::string env(const std::string& ts, const std::string& type, json payload) {
  return json{{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}}.dump();
}

std::string fcall(const std::string& ts, const std::string& name, json args, const std::string& id) {
  return env(ts, "response_item",
             {{"type", "function_call"}, {"name", name}, {"arguments", args.dump()}, {"call_id", id}});
}

std::string fout(const std::string& ts, const std::string& id, const std::string& out) {
  return env(ts, "response_item", {{"type", "function_call_output"}, {"call_id", id}, {"output", out}});
}

std::string meta(const std::string& id) {
  return env(
      "2026-02-01T00:00:00.000Z", "session_meta",
      {{"session_id", id}, {"timestamp", "2026-02-01T00:00:00.000Z"}, {"cwd", "/w"}, {"source", "exec"}});
}

}  // namespace

TEST(CodexRobustness, ItemCompletedAndCodeModeExec) {
  px_test::TempDir dir;
  std::string id = "01900000-0000-7000-8000-000000000001";
  json cmd_item = {{"type", "CommandExecution"}, {"id", "call_a"}, {"command", "npm test"}, {"cwd", "/w"},
                   {"status", "Failed"},         {"exit_code", 3}};
  json cell_cmd = {{"type", "CommandExecution"}, {"id", "cell_1"}, {"command", "ls -la"}, {"cwd", "sub"},
                   {"status", "Completed"},      {"exit_code", 0}};
  // Codex writes a cell's cwd as a file:// URL (percent-escaped); another host is no local path.
  json cell_url = {{"type", "CommandExecution"}, {"id", "cell_4"},        {"command", "pwd"},
                   {"cwd", "file:///w/a%20b"},   {"status", "Completed"}, {"exit_code", 0}};
  json cell_host = {
      {"type", "CommandExecution"}, {"id", "cell_5"}, {"command", "pwd"}, {"cwd", "file://elsewhere/x"},
      {"status", "Completed"},      {"exit_code", 0}, {"source", "agent"}};
  json cell_patch = {
      {"type", "FileChange"},
      {"id", "cell_2"},
      {"status", "Completed"},
      {"changes", json::array({{{"path", "/w/new.txt"}, {"kind", {{"type", "add"}}}},
                               {{"path", "/w/old.txt"},
                                {"kind", {{"type", "update"}, {"move_path", "/w/moved.txt"}}}}})}};
  json declined = {{"type", "FileChange"},
                   {"id", "cell_3"},
                   {"status", "Declined"},
                   {"changes", {{"/w/nope.txt", {{"type", "delete"}}}}}};
  dir.file(
      "sessions/2026/02/01/rollout-2026-02-01T00-00-00-" + id + ".jsonl",
      lines({meta(id), env("2026-02-01T00:00:01.000Z", "turn_context", {{"cwd", "/w"}, {"model", "gpt-6"}}),
             env("2026-02-01T00:00:02.000Z", "world_state", {{"anything", 1}}),
             env("2026-02-01T00:00:02.500Z", "something_new", json::array({1, 2})),
             fcall("2026-02-01T00:00:03.000Z", "exec_command", {{"cmd", "npm test"}}, "call_a"),
             fout("2026-02-01T00:00:04.000Z", "call_a", "Process exited with code 3\nOutput:\n"),
             env("2026-02-01T00:00:04.100Z", "event_msg", {{"type", "item_completed"}, {"item", cmd_item}}),
             // code mode: one `exec` tool runs JavaScript; its actions arrive as item_completed
             fcall("2026-02-01T00:00:05.000Z", "exec", {{"code", "await tools.exec_command({cmd:'ls -la'})"}},
                   "call_exec"),
             env("2026-02-01T00:00:05.500Z", "event_msg", {{"type", "item_completed"}, {"item", cell_cmd}}),
             env("2026-02-01T00:00:05.600Z", "event_msg", {{"type", "item_completed"}, {"item", cell_patch}}),
             env("2026-02-01T00:00:05.700Z", "event_msg", {{"type", "item_completed"}, {"item", declined}}),
             env("2026-02-01T00:00:05.800Z", "event_msg", {{"type", "item_completed"}, {"item", cell_url}}),
             env("2026-02-01T00:00:05.900Z", "event_msg", {{"type", "item_completed"}, {"item", cell_host}}),
             fout("2026-02-01T00:00:06.000Z", "call_exec", "done")}));
  auto r = tx::codex::parse({dir.path()});
  EXPECT_TRUE(r.warnings.empty());
  const json s = px_test::times_in_entries(only_session(r));
  EXPECT_EQ(s["session_id"], id);
  ASSERT_EQ(s["commands"].size(), 4u);  // the exec_command call and its item_completed count once
  EXPECT_EQ(s["commands"][0]["command"], "npm test");
  EXPECT_EQ(s["commands"][0]["exit_code"], 3);
  EXPECT_EQ(s["commands"][1]["command"], "ls -la");
  EXPECT_EQ(s["commands"][1]["cwd"], "/w/sub");
  EXPECT_EQ(s["commands"][1]["status"], "success");
  EXPECT_EQ(s["commands"][1]["tool"], "exec_command");
  EXPECT_EQ(s["commands"][2]["cwd"], "/w/a b");
  EXPECT_EQ(s["commands"][3]["cwd"], "file://elsewhere/x");  // not a local path: kept as written
  EXPECT_EQ(s["commands"][3]["tool"], "shell");
  // Each action has the time of the line that recorded it: the call, or the item of a cell.
  EXPECT_EQ(s["commands"][0]["at"], "2026-02-01T00:00:03.000Z");
  EXPECT_EQ(s["commands"][1]["at"], "2026-02-01T00:00:05.500Z");
  const std::string at = "2026-02-01T00:00:05.600Z";
  json changes =
      json::array({{{"path", "/w/new.txt"}, {"tool", "apply_patch"}, {"action", "create"}, {"at", at}},
                   {{"path", "/w/moved.txt"},
                    {"tool", "apply_patch"},
                    {"action", "move"},
                    {"from", "/w/old.txt"},
                    {"at", at}}});
  EXPECT_EQ(s["files_changed"], changes);
  EXPECT_EQ(s["models"], json::array({"gpt-6"}));
  EXPECT_EQ(s["ended_at"], "2026-02-01T00:00:06.000Z");
}

TEST(CodexRobustness, UnifiedExecExitArrivesThroughWriteStdinAndInterceptedPatch) {
  px_test::TempDir dir;
  std::string id = "01900000-0000-7000-8000-000000000002";
  std::string heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\nEOF";
  dir.file(
      "rollout-" + id + ".jsonl",
      lines({meta(id), fcall("2026-02-01T00:00:01.000Z", "exec_command", {{"cmd", "npm run dev"}}, "c1"),
             fout("2026-02-01T00:00:02.000Z", "c1",
                  "Chunk ID: 1\nWall time: 10s\nProcess running with session ID 42\nOutput:\n"),
             fcall("2026-02-01T00:00:03.000Z", "write_stdin", {{"session_id", 42}, {"chars", ""}}, "c2"),
             fout("2026-02-01T00:00:04.000Z", "c2", "Chunk ID: 2\nProcess exited with code 130\nOutput:\n"),
             fcall("2026-02-01T00:00:05.000Z", "shell_command", {{"command", heredoc}, {"workdir", "pkg"}},
                   "c3"),
             fout("2026-02-01T00:00:06.000Z", "c3",
                  "Exit code: 0\nWall time: 0s\nOutput:\nSuccess. Updated the following files:\nA a.txt\n"),
             fcall("2026-02-01T00:00:07.000Z", "shell", {{"command", {"rm", "it's"}}}, "c4"),
             fout("2026-02-01T00:00:08.000Z", "c4", "exec command rejected by user"),
             fcall("2026-02-01T00:00:09.000Z", "apply_patch",
                   {{"input", "*** Begin Patch\n*** Update File: b.txt\n@@\n-a\n+b\n*** End Patch"}}, "c5"),
             fout("2026-02-01T00:00:10.000Z", "c5", "apply_patch verification failed: no such line")}));
  auto r = tx::codex::parse({dir.path() + "/rollout-" + id + ".jsonl"});
  const json s = px_test::times_in_entries(only_session(r));
  ASSERT_EQ(s["commands"].size(), 2u);
  EXPECT_EQ(s["commands"][0]["exit_code"], 130);
  EXPECT_EQ(s["commands"][0]["status"], "error");
  EXPECT_EQ(s["commands"][1]["command"], "rm 'it'\"'\"'s'");
  EXPECT_TRUE(s["commands"][1]["exit_code"].is_null());
  EXPECT_EQ(s["commands"][1]["status"], "error");
  // The patch sent through shell_command is a change, not a command: no `command` index to link.
  EXPECT_EQ(s["files_changed"], json::array({{{"path", "/w/pkg/a.txt"},
                                              {"tool", "apply_patch"},
                                              {"action", "create"},
                                              {"at", "2026-02-01T00:00:05.000Z"}}}));
}

TEST(CodexRobustness, BareEraHugeLineAndTruncation) {
  px_test::TempDir dir;
  std::string id = "5973ae3c-0b66-4c4d-9d1a-1d2b3c4d5e6f";
  std::string big(20u << 20, 'y');
  std::string content = lines(
      {json{{"id", id}, {"timestamp", "2025-06-01T10:00:00Z"}, {"instructions", "be nice"}}.dump(),
       json{{"record_type", "state"}}.dump(),
       json{
           {"type", "message"},
           {"role", "user"},
           {"content",
            json::array({{{"type", "input_text"},
                          {"text", "<environment_context>\n<cwd>/old/repo</cwd>\n</environment_context>"}}})}}
           .dump(),
       json{{"type", "function_call"},
            {"name", "shell"},
            {"arguments", json{{"command", {"bash", "-lc", "cat big"}}}.dump()},
            {"call_id", "k1"}}
           .dump(),
       json{{"type", "function_call_output"},
            {"call_id", "k1"},
            {"output", json{{"output", big}, {"metadata", {{"exit_code", 0}}}}.dump()}}
           .dump(),
       "this is not json",
       json{{"type", "function_call"},
            {"name", "shell"},
            {"arguments", json{{"command", {"ls"}}, {"workdir", "src"}}.dump()},
            {"call_id", "k2"}}
           .dump()});
  content += "{\"type\":\"function_call_output\",\"call_id\":\"k2\",\"out";
  dir.file("sessions/rollout-2025-06-01-" + id + ".jsonl", content);
  auto r = tx::codex::parse({dir.path()});
  const json s = px_test::times_in_entries(only_session(r));
  EXPECT_EQ(s["session_id"], id);
  EXPECT_EQ(s["cwd"], "/old/repo");
  EXPECT_EQ(s["started_at"], "2025-06-01T10:00:00.000Z");
  EXPECT_TRUE(s["ended_at"].is_null());
  EXPECT_EQ(s["malformed_lines"], 2);
  ASSERT_EQ(s["commands"].size(), 2u);
  EXPECT_EQ(s["commands"][0]["exit_code"], 0);
  EXPECT_EQ(s["commands"][1]["cwd"], "/old/repo/src");
  EXPECT_EQ(s["commands"][1]["status"], "unknown");
  EXPECT_TRUE(s["commands"][0]["at"].is_null());  // bare-era lines have no time stamp
}

TEST(CodexRobustness, TokenTotalsKeepTheirCountsOnly) {
  // The totals are copied into the session; a value nested in them (the file is the run's) would
  // make the session one the host refuses (it reads nothing nested deeper than 128 levels).
  px_test::TempDir dir;
  std::string id = "01900000-0000-7000-8000-000000000009";
  json usage = {{"input_tokens", 120}, {"output_tokens", 54}, {"total_tokens", 174}, {"note", "x"}};
  std::string deep = std::string(300, '[') + std::string(300, ']');
  std::string line = env("2026-02-01T00:00:02.000Z", "event_msg",
                         {{"type", "token_count"}, {"info", {{"total_token_usage", usage}}}});
  line.insert(line.find("\"input_tokens\""), "\"nested\":" + deep + ",");
  dir.file(id + ".jsonl", lines({meta(id), line}));
  auto r = tx::codex::parse({dir.path()});
  const json& s = only_session(r);
  EXPECT_EQ(s["token_usage"], json({{"input_tokens", 120}, {"output_tokens", 54}, {"total_tokens", 174}}))
      << s["token_usage"].dump().substr(0, 200);
  EXPECT_EQ(s["malformed_lines"], 0);
}

TEST(CodexRobustness, ExecCommandEndWinsOverOutput) {
  px_test::TempDir dir;
  std::string id = "01900000-0000-7000-8000-000000000003";
  dir.file(id + ".jsonl",
           lines({meta(id),
                  fcall("2026-02-01T00:00:01.000Z", "shell", {{"command", {"bash", "-c", "make"}}}, "m1"),
                  env("2026-02-01T00:00:02.000Z", "event_msg",
                      {{"type", "exec_command_end"},
                       {"call_id", "m1"},
                       {"exit_code", 2},
                       {"command", {"bash", "-c", "make"}}}),
                  fout("2026-02-01T00:00:03.000Z", "m1", "Exit code: 0\n")}));
  auto r = tx::codex::parse({dir.path()});
  const json& s = only_session(r);
  ASSERT_EQ(s["commands"].size(), 1u);
  EXPECT_EQ(s["commands"][0]["exit_code"], 2);
  EXPECT_EQ(s["commands"][0]["argv"], json::array({"bash", "-c", "make"}));
  EXPECT_EQ(s["commands"][0]["command"], "make");
}
