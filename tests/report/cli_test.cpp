// The two commands through the real executable: `parallex transcripts` against
// the fixtures' EXPECTED.json, and `parallex report` on a synthetic run.
#include <gtest/gtest.h>

#include "test_paths.hpp"
#include "test_support.hpp"

using namespace px_test;

namespace {

std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }

bool have_parallex() { return fs::exists(parallex()); }

std::string plugin_env() { return "PARALLEX_PLUGIN_PATH='" + std::string(PARALLEX_PLUGIN_BUILD_DIR) + "' "; }

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
  if (got.empty()) GTEST_SKIP() << "the " << harness << " plugin returned no session (built without its parser?)";
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
  const std::string text = sh_output(plugin_env() + "'" + parallex() + "' transcripts --harness " + harness + " '" +
                                     (fixtures / harness).string() + "' 2>/dev/null");
  for (const auto& w : want) EXPECT_NE(text.find(w["session_id"].get<std::string>()), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Harnesses, TranscriptsCommand, ::testing::Values("claude-code", "codex", "opencode"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(TranscriptsCommandErrors, UnknownHarnessAndMissingPath) {
  if (!have_parallex()) GTEST_SKIP() << "the parallex executable was not built";
  EXPECT_NE(sh(plugin_env() + "'" + parallex() + "' transcripts --harness nosuch /tmp >/dev/null 2>&1"), 0);
  const std::string err = sh_output(plugin_env() + "'" + parallex() +
                                    "' transcripts --harness claude-code /nonexistent/px-transcripts 2>&1 >/dev/null");
  EXPECT_NE(err.find("/nonexistent/px-transcripts"), std::string::npos) << err;
}

TEST(ReportCommand, JsonHtmlAndTerminalViews) {
  if (!have_parallex()) GTEST_SKIP() << "the parallex executable was not built";
  Scratch scratch;
  Secrets secrets;
  SyntheticRun run;
  run.build(scratch.root, secrets);
  const std::string base = plugin_env() + "'" + parallex() + "' report --runs-dir '" + run.runs_dir.string() + "' ";
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
  EXPECT_NE(sh_output(base + "--run nosuch-run 2>&1 >/dev/null").find("no run nosuch-run"), std::string::npos);
  EXPECT_EQ(sh(base + "--since yesterday-ish >/dev/null 2>&1"), 2);
  EXPECT_EQ(sh(plugin_env() + "'" + parallex() + "' report --agent no-such-agent-xyz >/dev/null 2>&1"), 3);
}
