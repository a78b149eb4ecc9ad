// Transcripts the real clients wrote (tests/fixtures/recorded/): the parser must show exactly
// what the session did, field by field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "parallex_transcripts/codex.hpp"

namespace tx = parallex::transcripts;
using nlohmann::json;

namespace {

std::string recorded_dir() {
  return std::string(PARALLEX_SOURCE_DIR) + "/tests/fixtures/recorded";
}

}  // namespace

// Codex 0.171.0's default model runs every tool from a JavaScript cell of its one `exec` tool:
// the commands are `exec_command` calls whose records give the cwd as a file:// URL, and a
// patch's files come as a map in hash order (a-second.txt before new.txt in this file).
TEST(RecordedCodex, CodeModeSessionIsReportedAsItRan) {
  const auto r = tx::codex::parse({recorded_dir() + "/codex-code-mode"});
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_EQ(r.sessions.size(), 1u);
  const json s = px_test::times_in_entries(r.sessions[0]);
  const std::string project = "/tmp/px-record/project";
  EXPECT_EQ(s["cwd"], project);
  EXPECT_EQ(s["models"], json::array({"gpt-6.2-sol"}));
  EXPECT_EQ(s["files_read"], json::array());  // code mode has no read tool: `cat` is a command
  // Each at the time of the item_completed line that recorded it (a cell's actions have no call).
  const json changes = json::array({
      {{"path", project + "/new.txt"},
       {"tool", "apply_patch"},
       {"action", "create"},
       {"at", "2026-12-05T07:50:45.767Z"}},
      {{"path", project + "/a-second.txt"},
       {"tool", "apply_patch"},
       {"action", "create"},
       {"at", "2026-12-05T07:50:45.767Z"}},
      {{"path", project + "/edit.txt"},
       {"tool", "apply_patch"},
       {"action", "modify"},
       {"at", "2026-12-05T07:50:45.829Z"}},
  });
  EXPECT_EQ(s["files_changed"], changes) << s["files_changed"].dump(1);
  ASSERT_EQ(s["commands"].size(), 3u) << s["commands"].dump(1);
  const std::vector<std::pair<std::string, int>> want{
      {"cat " + project + "/edit.txt", 0}, {"echo px-e2e-ok", 0}, {"ls /nonexistent-px-e2e", 2}};
  const std::vector<std::string> at{"2026-12-05T07:50:45.672Z", "2026-12-05T07:50:45.981Z",
                                    "2026-12-05T07:50:46.133Z"};
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& c = s["commands"][i];
    EXPECT_EQ(c["command"], want[i].first);
    EXPECT_EQ(c["cwd"], project) << c.dump();
    EXPECT_EQ(c["tool"], "exec_command") << c.dump();
    EXPECT_EQ(c["exit_code"], want[i].second);
    EXPECT_EQ(c["status"], want[i].second == 0 ? "success" : "error");
    EXPECT_EQ(c["argv"], json::array({"/bin/bash", "-lc", want[i].first}));
    EXPECT_EQ(c["at"], at[i]);
  }
  EXPECT_EQ(s["malformed_lines"], 0);
  EXPECT_FALSE(s["token_usage"].is_null());
}
