// The transcript slots of the ABI, wired to the parser libraries.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "loaded_plugin.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace px_test;

namespace {

struct Wiring {
  std::string plugin;
  bool built;  // the parser library existed when the plugin was configured
};

std::vector<Wiring> wirings() {
  return {
      {"claude-code", true},
      {"codex", true},
      {"opencode", true},
  };
}

class Transcripts : public ::testing::TestWithParam<Wiring> {
 protected:
  const px_plugin* plugin() {
    if (!GetParam().built) return nullptr;
    const px_plugin* p = load_plugin(GetParam().plugin);
    if (p && (!p->parse_transcripts || !p->transcript_roots)) {
      ADD_FAILURE() << GetParam().plugin << " was built with its parser but does not offer it";
      return nullptr;
    }
    return p;
  }
};

TEST_P(Transcripts, RootsLieUnderTheHome) {
  const px_plugin* p = plugin();
  if (!p) GTEST_SKIP() << "px_transcripts for " << GetParam().plugin << " was not built";
  RootsResult r = transcript_roots(*p, "/home/agent");
  EXPECT_EQ(r.rc, PX_OK);
  ASSERT_FALSE(r.roots.empty());
  for (const auto& root : r.roots) EXPECT_EQ(root.rfind("/home/agent/", 0), 0u) << root;
}

TEST_P(Transcripts, AMissingInputIsAWarningNotAFailure) {
  const px_plugin* p = plugin();
  if (!p) GTEST_SKIP() << "px_transcripts for " << GetParam().plugin << " was not built";
  const std::string missing = "/nonexistent/px-" + std::to_string(::getpid()) + "/transcript";
  TranscriptResult r = parse_transcripts(*p, {missing});
  EXPECT_EQ(r.rc, PX_OK) << (r.errors.empty() ? "" : r.errors.front());
  EXPECT_TRUE(r.sessions.empty());
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0].first, missing);
}

TEST_P(Transcripts, FixtureSessionsArriveAsJsonObjects) {
  const px_plugin* p = plugin();
  if (!p) GTEST_SKIP() << "px_transcripts for " << GetParam().plugin << " was not built";
  std::string dir_name = GetParam().plugin;
  for (auto& c : dir_name)
    if (c == '-') c = '_';
  std::vector<std::string> candidates;
  for (const std::string& base : {std::string(PARALLEX_FIXTURES_DIR) + "/transcripts/",
                                  std::string(PARALLEX_SOURCE_DIR) + "/tests/transcripts/fixtures/"})
    for (const std::string& name : {GetParam().plugin, dir_name}) candidates.push_back(base + name);
  std::string fixture;
  for (const auto& c : candidates)
    if (fs::is_directory(c)) fixture = c;
  if (fixture.empty()) GTEST_SKIP() << "no transcript fixtures for " << GetParam().plugin;
  TranscriptResult r = parse_transcripts(*p, {fixture});
  EXPECT_EQ(r.rc, PX_OK) << (r.errors.empty() ? "" : r.errors.front());
  ASSERT_FALSE(r.sessions.empty()) << fixture;
  for (const auto& s : r.sessions) {
    auto j = nlohmann::json::parse(s, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << s.substr(0, 200);
    EXPECT_TRUE(j.is_object());
    EXPECT_TRUE(j.contains("session_id")) << s.substr(0, 200);
  }
}

INSTANTIATE_TEST_SUITE_P(Parsers, Transcripts, ::testing::ValuesIn(wirings()), [](const auto& test) {
  std::string n = test.param.plugin;
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
});

}  // namespace
