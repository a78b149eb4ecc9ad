// Every session of the shared fixture set must come out exactly as EXPECTED.json lists it, and
// the time of each of its actions (`action_times`, this project's addition) as
// EXPECTED-action-times.json lists it.
#include <gtest/gtest.h>

#include <map>

#include "helpers.hpp"
#include "parallex_transcripts/claude_code.hpp"
#include "parallex_transcripts/codex.hpp"
#include "parallex_transcripts/opencode.hpp"

namespace tx = parallex::transcripts;
using nlohmann::json;

namespace {

tx::ParseResult parse_agent(const std::string& agent, const std::vector<std::string>& paths,
                            tx::Window w = {}, tx::Form form = tx::Form::object) {
  if (agent == "claude-code") return tx::claude_code::parse(paths, w, form);
  if (agent == "codex") return tx::codex::parse(paths, w, form);
  return tx::opencode::parse(paths, w, form);
}

// Our source_files are absolute; EXPECTED lists them relative to the agent's home.
json relativize(json session, const std::string& home) {
  for (auto& f : session["source_files"]) f = f.get<std::string>().substr(home.size() + 1);
  return session;
}

void check_agent(const std::string& agent) {
  json expected = px_test::load_json(px_test::fixtures_dir() + "/EXPECTED.json");
  const json times =
      px_test::load_json(px_test::fixtures_dir() + "/EXPECTED-action-times.json")["agents"][agent];
  const json& spec = expected["agents"][agent];
  std::string home = px_test::fixtures_dir() + "/" + spec["home"].get<std::string>();
  auto result = parse_agent(agent, {home});
  for (const auto& w : result.warnings) ADD_FAILURE() << w.path << ": " << w.message;

  std::map<std::string, json> got;
  for (const auto& s : result.sessions) {
    json session = relativize(s, home);
    const std::string id = session["session_id"];
    ASSERT_TRUE(session.contains("action_times")) << agent << " session " << id;
    EXPECT_EQ(session["action_times"], times.value(id, json()))
        << agent << " session " << id << " action_times";
    // One time per entry of each list, in its order.
    EXPECT_EQ(session["action_times"]["commands"].size(), session["commands"].size()) << id;
    EXPECT_EQ(session["action_times"]["files_changed"].size(), session["files_changed"].size()) << id;
    session.erase("action_times");
    got[id] = std::move(session);
  }
  ASSERT_EQ(got.size(), spec["sessions"].size());
  for (json want : spec["sessions"]) {
    want.erase("notes");
    std::string id = want["session_id"];
    auto it = got.find(id);
    ASSERT_NE(it, got.end()) << "missing session " << id;
    if (it->second != want) {
      for (auto& [key, value] : want.items())
        EXPECT_EQ(it->second.value(key, json()), value) << agent << " session " << id << " field " << key;
      for (auto& [key, value] : it->second.items())
        EXPECT_TRUE(want.contains(key)) << agent << " session " << id << " unexpected field " << key;
    }
  }
}

}  // namespace

TEST(TranscriptFixtures, ClaudeCode) {
  check_agent("claude-code");
}
TEST(TranscriptFixtures, Codex) {
  check_agent("codex");
}
TEST(TranscriptFixtures, Opencode) {
  check_agent("opencode");
}

TEST(TranscriptFixtures, OutputIsSortedByStartThenId) {
  for (auto* agent : {"claude-code", "codex", "opencode"}) {
    auto result = parse_agent(agent, {px_test::fixtures_dir() + "/" + agent});
    for (std::size_t i = 1; i < result.sessions.size(); ++i) {
      const auto& a = result.sessions[i - 1];
      const auto& b = result.sessions[i];
      EXPECT_LE(std::make_pair(a["started_at"].get<std::string>(), a["session_id"].get<std::string>()),
                std::make_pair(b["started_at"].get<std::string>(), b["session_id"].get<std::string>()));
    }
  }
}

// The form the plugins ask for (each session's text, written on the thread that built it) holds
// the same sessions in the same order as the objects, within a window too.
TEST(TranscriptFixtures, TextFormHoldsTheSameSessionsInTheSameOrder) {
  const tx::Window since_2026{1767225600000, 0};  // 2026-01-01T00:00:00Z
  for (auto* agent : {"claude-code", "codex", "opencode"}) {
    for (const tx::Window w : {tx::Window{}, since_2026}) {
      const std::string home = px_test::fixtures_dir() + "/" + agent;
      const auto objects = parse_agent(agent, {home}, w, tx::Form::object);
      const auto texts = parse_agent(agent, {home}, w, tx::Form::text);
      EXPECT_TRUE(objects.texts.empty());
      EXPECT_TRUE(texts.sessions.empty());
      ASSERT_EQ(texts.texts.size(), objects.sessions.size()) << agent;
      ASSERT_FALSE(objects.sessions.empty()) << agent;
      for (std::size_t i = 0; i < objects.sessions.size(); ++i)
        EXPECT_EQ(json::parse(texts.texts[i]), objects.sessions[i]) << agent << " session " << i;
      EXPECT_EQ(texts.warnings.size(), objects.warnings.size()) << agent;
    }
  }
}

TEST(TranscriptFixtures, WindowKeepsOverlappingSessions) {
  // Codex sessions: 2025-10-02, 2026-11-20 (two), 2026-11-21.
  std::string home = px_test::fixtures_dir() + "/codex";
  tx::Window w;
  w.since_ms = 1795219200000;  // 2026-11-21T00:00:00Z
  auto r = tx::codex::parse({home}, w);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0]["session_id"], "01a1feff-61c0-784d-9d6c-c0e48f2942e2");
  w.since_ms = 0;
  w.until_ms = 1795219200000;
  r = tx::codex::parse({home}, w);
  EXPECT_EQ(r.sessions.size(), 3u);
  // A window inside a session (10:00:30 - 10:00:40 on 2026-11-20) still keeps it.
  w.since_ms = 1795168830000;
  w.until_ms = 1795168840000;
  r = tx::codex::parse({home}, w);
  ASSERT_EQ(r.sessions.size(), 1u);
  EXPECT_EQ(r.sessions[0]["session_id"], "01a1f866-0d00-7521-b45b-a2e11e1185d9");
}

TEST(TranscriptFixtures, Roots) {
  EXPECT_EQ(tx::claude_code::roots("/h").front(), "/h/.claude/projects");
  EXPECT_EQ(tx::codex::roots("/h").front(), "/h/.codex/sessions");
  EXPECT_EQ(tx::opencode::roots("/h").front(), "/h/.local/share/opencode");
}

// PARALLEX_REFERENCE_FIXTURES may name a reference copy of the fixture set
// (kept outside the repository by whoever maintains it): the copy in
// tests/fixtures must not drift from it. Without it the test skips, saying so.
TEST(TranscriptFixtures, CopyMatchesTheReferenceSet) {
  const char* reference_dir = std::getenv("PARALLEX_REFERENCE_FIXTURES");
  if (!reference_dir || !*reference_dir)
    GTEST_SKIP() << "PARALLEX_REFERENCE_FIXTURES is not set: no reference set to compare with";
  const std::string reference = std::string(reference_dir) + "/EXPECTED.json";
  if (!std::filesystem::exists(reference)) GTEST_SKIP() << reference << " does not exist";
  EXPECT_EQ(px_test::load_json(reference), px_test::load_json(px_test::fixtures_dir() + "/EXPECTED.json"))
      << "tests/fixtures/transcripts is out of date with " << reference_dir;
}

// Large inputs are parsed on several threads; the result must not depend on it.
TEST(TranscriptFixtures, SameResultWithThreads) {
  setenv("PARALLEX_TRANSCRIPT_THREADS", "4", 1);
  check_agent("claude-code");
  check_agent("codex");
  check_agent("opencode");
  unsetenv("PARALLEX_TRANSCRIPT_THREADS");
}
