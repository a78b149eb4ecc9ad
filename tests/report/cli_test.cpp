// The two commands through the real executable: `parallex transcripts` against
// the fixtures' EXPECTED.json, and `parallex report` on a synthetic run.
#include <gtest/gtest.h>

#include <cstdio>

#include "test_paths.hpp"
#include "test_support.hpp"

using namespace px_test;

namespace {

std::string parallex() {
  return std::string(PARALLEX_BINARY_DIR) + "/parallex";
}

bool have_parallex() {
  return fs::exists(parallex());
}

std::string plugin_env() {
  return "PARALLEX_PLUGIN_PATH='" + std::string(PARALLEX_PLUGIN_BUILD_DIR) + "' ";
}

}  // namespace

class TranscriptsCommand : public ::testing::TestWithParam<std::string> {};

TEST_P(TranscriptsCommand, PrintsTheSessionsOfExpectedJson) {
  if (!have_parallex()) GTEST_SKIP() << "the parallex executable was not built";
  const std::string harness = GetParam();
  const fs::path fixtures = fs::path(PARALLEX_SOURCE_DIR) / "tests/fixtures/transcripts";
  const auto expected = nlohmann::json::parse(read_text(fixtures / "EXPECTED.json"));
  const std::string out = sh_output(plugin_env() + "'" + parallex() + "' transcripts --harness " + harness +
                                    " --json '" + (fixtures / harness).string() + "' 2>/dev/null");
  auto got = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(got.is_array()) << out.substr(0, 500);
  const auto& want = expected["agents"][harness]["sessions"];
  if (got.empty())
    GTEST_SKIP() << "the " << harness << " plugin returned no session (built without its parser?)";
  ASSERT_EQ(got.size(), want.size());
  for (const auto& w : want) {
    const nlohmann::json* match = nullptr;
    for (const auto& g : got)
      if (g["session_id"] == w["session_id"]) match = &g;
    ASSERT_TRUE(match) << w["session_id"];
    for (const auto& [key, value] : w.items()) {
      if (key == "notes" || key == "source_files") continue;  // commentary of the fixture set, not extraction
      EXPECT_EQ((*match)[key], value) << harness << " " << w["session_id"] << " " << key;
    }
  }
  // The readable form names every session.
  const std::string text = sh_output(plugin_env() + "'" + parallex() + "' transcripts --harness " + harness +
                                     " '" + (fixtures / harness).string() + "' 2>/dev/null");
  for (const auto& w : want) EXPECT_NE(text.find(w["session_id"].get<std::string>()), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Harnesses, TranscriptsCommand, ::testing::Values("claude-code", "codex", "opencode"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Many sessions (the plugin writes their text, and the host reads and masks
// them, on every core): each comes whole, once, in the order of its files,
// and a secret in one is masked as on one thread.
TEST(TranscriptsCommandMany, ManySessionsComeWholeInTheirFilesOrderMasked) {
  if (!have_parallex()) GTEST_SKIP() << "the parallex executable was not built";
  const fs::path fixtures =
      fs::path(PARALLEX_SOURCE_DIR) / "tests/fixtures/transcripts/codex/sessions/2026/11/21";
  const fs::path one = fixtures / "rollout-2026-11-21T16-45-12-01a1feff-61c0-784d-9d6c-c0e48f2942e2.jsonl";
  const std::string text = read_text(one);
  const std::string id = "01a1feff-61c0-784d-9d6c-c0e48f2942e2";
  ASSERT_NE(text.find(id), std::string::npos);
  Scratch scratch;
  const int n = 150;
  for (int i = 0; i < n; ++i) {
    char mine[40];
    std::snprintf(mine, sizeof mine, "01a1feff-61c0-784d-9d6c-%012d", i);
    std::string t = text;
    for (std::size_t at; (at = t.find(id)) != std::string::npos;) t.replace(at, id.size(), mine);
    // The first line names the working folder: one session carries a key there.
    if (i == 77) t.replace(t.find("\"cwd\":\"") + 7, 0, "/sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX");
    char name[64];
    std::snprintf(name, sizeof name, "rollout-%04d.jsonl", i);
    write_text(scratch.root / "sessions" / name, t);
  }
  const std::string out =
      sh_output(plugin_env() + "'" + parallex() + "' transcripts --harness codex --json '" +
                (scratch.root / "sessions").string() + "' 2>/dev/null");
  const auto got = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(got.is_array()) << out.substr(0, 500);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    char mine[40];
    std::snprintf(mine, sizeof mine, "01a1feff-61c0-784d-9d6c-%012d", i);
    EXPECT_EQ(got[static_cast<std::size_t>(i)]["session_id"], mine);
    EXPECT_FALSE(got[static_cast<std::size_t>(i)]["commands"].empty()) << i;
  }
  EXPECT_EQ(out.find("sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"), std::string::npos);
  EXPECT_NE(got[77]["cwd"].get<std::string>().find("[REDACTED:openai-key]"), std::string::npos)
      << got[77]["cwd"];
}

TEST(TranscriptsCommandErrors, UnknownHarnessAndMissingPath) {
  if (!have_parallex()) GTEST_SKIP() << "the parallex executable was not built";
  EXPECT_NE(sh(plugin_env() + "'" + parallex() + "' transcripts --harness nosuch /tmp >/dev/null 2>&1"), 0);
  const std::string err =
      sh_output(plugin_env() + "'" + parallex() +
                "' transcripts --harness claude-code /nonexistent/px-transcripts 2>&1 >/dev/null");
  EXPECT_NE(err.find("/nonexistent/px-transcripts"), std::string::npos) << err;
}

TEST(ReportCommand, JsonHtmlAndTerminalViews) {
  if (!have_parallex()) GTEST_SKIP() << "the parallex executable was not built";
  Scratch scratch;
  Secrets secrets;
  SyntheticRun run;
  run.build(scratch.root, secrets);
  const std::string base =
      plugin_env() + "'" + parallex() + "' report --runs-dir '" + run.runs_dir.string() + "' ";
  auto json = nlohmann::json::parse(sh_output(base + "--json 2>/dev/null"), nullptr, false);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json["schema"], "parallex-report/1");
  ASSERT_EQ(json["runs"].size(), 1u);
  EXPECT_EQ(json["runs"][0]["id"], kRunId);
  const fs::path page = scratch.root / "r.html";
  EXPECT_EQ(sh(base + "--run " + kRunId + " --html '" + page.string() + "' >/dev/null 2>&1"), 0);
  EXPECT_NE(read_text(page).find("<h2>Run <span class=\"id\">" + std::string(kRunId)), std::string::npos);
  const std::string text = sh_output(base + "--last 2>/dev/null");
  EXPECT_NE(text.find("Run " + std::string(kRunId)), std::string::npos);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "colour on a pipe";
  // An unknown run: a message naming it, exit status 3.
  EXPECT_EQ(sh(base + "--run nosuch-run >/dev/null 2>&1"), 3);
  EXPECT_NE(sh_output(base + "--run nosuch-run 2>&1 >/dev/null").find("no run nosuch-run"),
            std::string::npos);
  EXPECT_EQ(sh(base + "--since yesterday-ish >/dev/null 2>&1"), 2);
  EXPECT_EQ(sh(plugin_env() + "'" + parallex() + "' report --agent no-such-agent-xyz >/dev/null 2>&1"), 3);
}
