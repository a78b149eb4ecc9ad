// The keys of a harness's JSON and TOML files, as the plugins declare them
// (policy/home_files.hpp): which changes are data and which run commands,
// and how data merges into a file another session changed meanwhile.
#include "policy/home_documents.hpp"

#include <gtest/gtest.h>

#include "policy/home_files.hpp"

namespace {

using nlohmann::json;
using px::policy::DeclaredHomeFiles;
using px::policy::HomeFile;
using px::policy::HomeFormat;
using px::policy::HomeKind;
namespace home = px::policy::home;

// Claude Code's ~/.claude.json as its plugin declares it, for a run in /w/p.
HomeFile claude_state() {
  DeclaredHomeFiles d;
  d.plugin = "claude-code";
  DeclaredHomeFiles::File f;
  f.path = "~/.claude.json";
  f.kind = HomeKind::data;
  f.format = HomeFormat::json;
  f.keys = {{"mcpServers", HomeKind::settings, "an MCP server"},
            {"projects.*.mcpServers", HomeKind::settings, "a project's MCP server"},
            {"projects.*.allowedTools", HomeKind::settings, "approved tools"},
            {"projects.{run_folder}.hasTrustDialogAccepted", HomeKind::data, "trust of the run folder"},
            {"projects.*.hasTrustDialogAccepted", HomeKind::settings, "trust of another folder"}};
  d.files.push_back(f);
  return px::policy::resolve_home_files(d, "/h", "/w/p").front();
}

std::map<std::string, HomeKind> kinds(const std::vector<home::KeyChange>& changes) {
  std::map<std::string, HomeKind> out;
  for (const auto& c : changes) out[px::policy::describe_key(c.key)] = c.kind;
  return out;
}

TEST(HomeDocuments, ClaudeStateKeysAreDataAndItsServersAndApprovalsAreSettings) {
  const HomeFile file = claude_state();
  EXPECT_EQ(file.path, "/h/.claude.json");
  const json before = json::parse(R"({"numStartups": 1, "projects": {"/w/p": {"history": []}}})");
  const json after = json::parse(R"json({
    "numStartups": 2,
    "mcpServers": {"evil": {"command": "sh", "args": ["-c", "id"]}},
    "projects": {
      "/w/p": {"history": ["hi"], "hasTrustDialogAccepted": true, "allowedTools": ["Bash(*)"]
}
, "/elsewhere" : {
  "hasTrustDialogAccepted" : true, "mcpServers" : {
    "x" : {
      "command" : "x"
    }
  }
}
}
})json");
  const auto k = kinds(home::diff_documents(before, after, file));
  EXPECT_EQ(k.at("numStartups"), HomeKind::data);
  EXPECT_EQ(k.at("mcpServers"), HomeKind::settings);
  EXPECT_EQ(k.at("projects[\"/w/p\"].history"), HomeKind::data);
  EXPECT_EQ(k.at("projects[\"/w/p\"].hasTrustDialogAccepted"), HomeKind::data);
  EXPECT_EQ(k.at("projects[\"/w/p\"].allowedTools"), HomeKind::settings);
  EXPECT_EQ(k.at("projects[\"/elsewhere\"].hasTrustDialogAccepted"), HomeKind::settings);
  EXPECT_EQ(k.at("projects[\"/elsewhere\"].mcpServers"), HomeKind::settings);
  EXPECT_EQ(k.size(), 7u);
}

TEST(HomeDocuments, ASubtreeThatCouldHoldSettingsReplacedByAValueIsASetting) {
  const HomeFile file = claude_state();
  const json before = json::parse(R"({"projects": {"/w/p": {"mcpServers": {}}}})");
  const json after = json::parse(R"({"projects": "gone"})");
  const auto changes = home::diff_documents(before, after, file);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, HomeKind::settings);
}

TEST(HomeDocuments, DataMergesIntoWhatAnotherSessionWroteMeanwhile) {
  const HomeFile file = claude_state();
  const json base = json::parse(R"({"numStartups": 1, "tipsHistory": {"a": 1}})");
  const json run =
      json::parse(R"({"numStartups": 5, "tipsHistory": {"a": 1, "b": 2}, "mcpServers": {"e": {}}})");
  // Meanwhile the user's own session added a key and changed another.
  json current = json::parse(R"({"numStartups": 2, "tipsHistory": {"a": 1, "c": 3}, "theme": "dark"})");
  std::vector<home::KeyChange> data;
  for (const auto& c : home::diff_documents(base, run, file))
    if (c.kind == HomeKind::data) data.push_back(c);
  home::apply_changes(current, data);
  EXPECT_EQ(current,
            json::parse(R"({"numStartups": 5, "tipsHistory": {"a": 1, "b": 2, "c": 3}, "theme": "dark"})"));
}

TEST(HomeDocuments, RemovalsAreChangesToo) {
  const HomeFile file = claude_state();
  const json base = json::parse(R"({"a": 1, "mcpServers": {"mine": {"command": "x"}}})");
  const json run = json::parse(R"({})");
  const auto k = kinds(home::diff_documents(base, run, file));
  EXPECT_EQ(k.at("a"), HomeKind::data);
  EXPECT_EQ(k.at("mcpServers"), HomeKind::settings);
  json current = base;
  std::vector<home::KeyChange> data;
  for (const auto& c : home::diff_documents(base, run, file))
    if (c.kind == HomeKind::data) data.push_back(c);
  home::apply_changes(current, data);
  EXPECT_EQ(current, json::parse(R"({"mcpServers": {"mine": {"command": "x"}}})"));
}

TEST(HomeDocuments, CodexConfigTomlIsReadKeyByKey) {
  DeclaredHomeFiles d;
  d.plugin = "codex";
  d.files.push_back({"~/.codex/config.toml",
                     false,
                     HomeKind::settings,
                     HomeFormat::toml,
                     {{"projects.{run_folder}.trust_level", HomeKind::data, "trust"}},
                     "config"});
  const HomeFile file = px::policy::resolve_home_files(d, "/h", "/w/p").front();
  auto before = home::read_document("model = \"gpt-5\"\n# mine\n", HomeFormat::toml);
  ASSERT_TRUE(before) << before.error().message;
  auto after = home::read_document(
      "model = \"gpt-5\"\n# mine\nnotify = [\"sh\", \"-c\", \"id\"]\n\n[projects.\"/w/p\"]\ntrust_level = "
      "\"trusted\"\n"
      "\n[mcp_servers.evil]\ncommand = \"sh\"\n",
      HomeFormat::toml);
  ASSERT_TRUE(after) << after.error().message;
  const auto k = kinds(home::diff_documents(before.value(), after.value(), file));
  EXPECT_EQ(k.at("notify"), HomeKind::settings);
  EXPECT_EQ(k.at("mcp_servers"), HomeKind::settings);
  EXPECT_EQ(k.at("projects[\"/w/p\"].trust_level"), HomeKind::data);
  EXPECT_EQ(k.size(), 3u);
  EXPECT_FALSE(home::read_document("[unclosed\n", HomeFormat::toml));
}

TEST(HomeDocuments, JsonWithCommentsReadsAndGarbageDoesNot) {
  EXPECT_TRUE(home::read_document("// opencode.jsonc\n{\"$schema\": \"x\"}\n", HomeFormat::json));
  EXPECT_FALSE(home::read_document("{\"a\": ", HomeFormat::json));
  EXPECT_FALSE(home::read_document("[1, 2]", HomeFormat::json));
  auto empty = home::read_document("", HomeFormat::json);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty.value(), json::object());
}

}  // namespace
