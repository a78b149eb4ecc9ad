// opencode >= 1.2 keeps sessions in SQLite. The test builds a database with the table
// shapes of opencode 1.18 (see docs/transcripts.md):
//   session(id, project_id, workspace_id, parent_id, slug, directory, title, version, share_url,
//           summary_additions, summary_deletions, summary_files, summary_diffs, revert, permission,
//           time_created, time_updated, time_compacting, time_archived)
//   message(id, session_id, time_created, time_updated, data)
//   part(id, message_id, session_id, time_created, time_updated, data)
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "helpers.hpp"
#include "parallex_transcripts/opencode.hpp"

namespace tx = parallex::transcripts;
using nlohmann::json;

namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n"
                                                                              << sql;
}

std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else
      out.push_back(c);
  }
  return out + "'";
}

void create_schema(sqlite3* db) {
  exec(db,
       "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id "
       "TEXT, "
       "slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, share_url "
       "TEXT, "
       "summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER, summary_diffs TEXT, "
       "revert TEXT, permission TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, "
       "time_compacting INTEGER, time_archived INTEGER);"
       "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, "
       "time_updated INTEGER NOT NULL, data TEXT NOT NULL);"
       "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, "
       "time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);"
       "CREATE INDEX message_session_time_created_id_idx ON message(session_id, time_created, id);"
       "CREATE INDEX part_message_id_id_idx ON part(message_id, id);");
}

void session(sqlite3* db, const std::string& id, const std::string& parent, const std::string& dir,
             long long t0, long long t1) {
  exec(db,
       "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
       "time_updated) VALUES (" +
           q(id) + ", 'p1', " + (parent.empty() ? "NULL" : q(parent)) + ", 'slug', " + q(dir) +
           ", 't', '1.18.33', " + std::to_string(t0) + ", " + std::to_string(t1) + ")");
}

void message(sqlite3* db, const std::string& id, const std::string& sid, const std::string& data) {
  exec(db, "INSERT INTO message VALUES (" + q(id) + ", " + q(sid) + ", 1, 1, " + q(data) + ")");
}

void part(sqlite3* db, const std::string& id, const std::string& mid, const std::string& sid,
          const std::string& data) {
  exec(db, "INSERT INTO part VALUES (" + q(id) + ", " + q(mid) + ", " + q(sid) + ", 1, 1, " + q(data) + ")");
}

json tool(const std::string& name, const std::string& status, json input, json metadata = json::object()) {
  json state = {{"status", status}, {"input", std::move(input)}};
  if (status == "completed") {
    state["output"] = "ok";
    state["metadata"] = std::move(metadata);
  } else if (status == "error") {
    state["error"] = "boom";
  }
  return {{"type", "tool"}, {"callID", "call_" + name}, {"tool", name}, {"state", state}};
}

std::string build_db(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  create_schema(db);
  session(db, "ses_parent", "", "/home/u/app", 1768383000000, 1768383100000);
  session(db, "ses_child", "ses_parent", "/home/u/app", 1768383050000, 1768383060000);
  json assistant = {
      {"role", "assistant"},
      {"time", {{"created", 1768383001000}}},
      {"modelID", "claude-sonnet-4-5"},
      {"providerID", "anthropic"},
      {"path", {{"cwd", "/home/u/app"}, {"root", "/home/u/app"}}},
      {"cost", 0.1},
      {"tokens",
       {{"input", 999}, {"output", 999}, {"reasoning", 0}, {"cache", {{"read", 0}, {"write", 0}}}}}};
  message(db, "msg_001", "ses_parent", json{{"role", "user"}, {"time", {{"created", 1768383000500}}}}.dump());
  message(db, "msg_002", "ses_parent", assistant.dump());
  part(db, "prt_001", "msg_002", "ses_parent", tool("read", "completed", {{"filePath", "src/a.ts"}}).dump());
  part(db, "prt_002", "msg_002", "ses_parent",
       tool("write", "completed", {{"filePath", "/home/u/app/new.ts"}}, {{"exists", false}}).dump());
  part(db, "prt_003", "msg_002", "ses_parent",
       tool("edit", "error", {{"filePath", "/home/u/app/x.ts"}}).dump());
  json npm_test = tool("bash", "completed", {{"command", "npm test"}}, {{"exit", 1}, {"output", "fail"}});
  npm_test["state"]["time"] = {{"start", 1768383002250}, {"end", 1768383004000}};
  part(db, "prt_004", "msg_002", "ses_parent", npm_test.dump());
  part(db, "prt_005", "msg_002", "ses_parent",
       tool("bash", "completed", {{"command", "sleep 1"}, {"workdir", "sub"}}, {{"exit", nullptr}}).dump());
  part(db, "prt_006", "msg_002", "ses_parent", tool("bash", "running", {{"command", "npm start"}}).dump());
  part(db, "prt_007", "msg_002", "ses_parent",
       tool("apply_patch", "completed",
            {{"patchText", "*** Begin Patch\n*** Delete File: old.ts\n*** End Patch"}})
           .dump());
  part(db, "prt_008", "msg_002", "ses_parent",
       tool("webfetch", "completed", {{"url", "https://example.com"}}).dump());
  part(db, "prt_009", "msg_002", "ses_parent",
       "{\"type\":\"tool\",\"tool\":\"bash\",\"state\":{");  // torn write
  part(db, "prt_010", "msg_002", "ses_parent",
       json{{"type", "step-finish"},
            {"tokens",
             {{"input", 3}, {"output", 40}, {"reasoning", 5}, {"cache", {{"read", 100}, {"write", 7}}}}}}
           .dump());
  part(db, "prt_011", "msg_002", "ses_parent",
       json{{"type", "step-finish"},
            {"tokens",
             {{"input", 2}, {"output", 10}, {"reasoning", 0}, {"cache", {{"read", 50}, {"write", 0}}}}}}
           .dump());
  json child = assistant;
  child["modelID"] = "claude-haiku-4-5";
  child["cost"] = 0.02;
  message(db, "msg_101", "ses_child", child.dump());
  part(db, "prt_101", "msg_101", "ses_child", tool("grep", "completed", {{"pattern", "x"}}).dump());
  sqlite3_close(db);
  return path;
}

}  // namespace

TEST(OpencodeSqlite, ReadsSessionsMessagesAndParts) {
  px_test::TempDir dir;
  std::string db = build_db(dir.path() + "/opencode.db");
  auto r = tx::opencode::parse({dir.path()});
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_EQ(r.sessions.size(), 2u);
  const json s = px_test::times_in_entries(r.sessions[0]);
  EXPECT_EQ(s["session_id"], "ses_parent");
  EXPECT_EQ(s["source_files"], json::array({db}));
  EXPECT_EQ(s["cwd"], "/home/u/app");
  EXPECT_EQ(s["started_at"], "2026-01-14T09:30:00.000Z");
  EXPECT_EQ(s["models"], json::array({"claude-sonnet-4-5"}));
  EXPECT_EQ(s["files_read"], json::array({"/home/u/app/src/a.ts"}));
  json changes = json::array(
      {{{"path", "/home/u/app/new.ts"}, {"tool", "write"}, {"action", "create"}, {"at", nullptr}},
       {{"path", "/home/u/app/old.ts"}, {"tool", "apply_patch"}, {"action", "delete"}, {"at", nullptr}}});
  EXPECT_EQ(s["files_changed"], changes);
  // A part's start time is its action's time; parts without one have none.
  json commands = json::array({{{"command", "npm test"},
                                {"cwd", "/home/u/app"},
                                {"exit_code", 1},
                                {"status", "error"},
                                {"tool", "bash"},
                                {"at", "2026-01-14T09:30:02.250Z"}},
                               {{"command", "sleep 1"},
                                {"cwd", "/home/u/app/sub"},
                                {"exit_code", nullptr},
                                {"status", "unknown"},
                                {"tool", "bash"},
                                {"at", nullptr}},
                               {{"command", "npm start"},
                                {"cwd", "/home/u/app"},
                                {"exit_code", nullptr},
                                {"status", "unknown"},
                                {"tool", "bash"},
                                {"at", nullptr}}});
  EXPECT_EQ(s["commands"], commands);
  EXPECT_EQ(s["urls"], json::array({"https://example.com"}));
  json tokens = {{"input", 5},        {"output", 50},     {"reasoning", 5},
                 {"cache_read", 150}, {"cache_write", 7}, {"cost", 0.1}};
  EXPECT_EQ(s["token_usage"], tokens);  // step-finish parts win over the (replaced) message tokens
  EXPECT_EQ(s["malformed_lines"], 1);
  const json& c = r.sessions[1];
  EXPECT_EQ(c["session_id"], "ses_child");
  EXPECT_EQ(c["parent_session_id"], "ses_parent");
  EXPECT_EQ(c["token_usage"]["input"], 999);  // no step-finish: message tokens
}

TEST(OpencodeSqlite, DatabaseAndJsonStorageTogether) {
  px_test::TempDir dir;
  build_db(dir.path() + "/opencode.db");
  std::filesystem::copy(px_test::fixtures_dir() + "/opencode/storage", dir.path() + "/storage",
                        std::filesystem::copy_options::recursive);
  auto r = tx::opencode::parse({dir.path()});
  EXPECT_EQ(r.sessions.size(), 5u);
}

TEST(OpencodeSqlite, LockedDatabaseWarnsAndOtherSourcesStillCount) {
  px_test::TempDir dir;
  std::string path = build_db(dir.path() + "/opencode.db");
  std::filesystem::copy(px_test::fixtures_dir() + "/opencode/storage", dir.path() + "/storage",
                        std::filesystem::copy_options::recursive);
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  exec(holder,
       "PRAGMA journal_mode=DELETE; BEGIN EXCLUSIVE; INSERT INTO part VALUES "
       "('prt_x','msg_002','ses_parent',1,1,'{}');");
  auto r = tx::opencode::parse({dir.path()});
  exec(holder, "ROLLBACK");
  sqlite3_close(holder);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].path, path);
  EXPECT_NE(r.warnings[0].message.find("locked"), std::string::npos) << r.warnings[0].message;
  EXPECT_EQ(r.sessions.size(), 3u);  // the JSON storage sessions
}

TEST(OpencodeSqlite, CorruptDatabaseWarns) {
  px_test::TempDir dir;
  std::string garbage(8192, '\x5a');
  std::string path = dir.file("opencode.db", "SQLite format 3" + std::string(1, '\0') + garbage);
  auto r = tx::opencode::parse({path});
  EXPECT_TRUE(r.sessions.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].message.find("corrupt"), std::string::npos) << r.warnings[0].message;

  std::string text = dir.file("notes.db", "hello, not a database");
  r = tx::opencode::parse({text});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].message.find("corrupt"), std::string::npos) << r.warnings[0].message;
}
