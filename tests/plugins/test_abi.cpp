// Each built plugin, loaded with dlopen, presents a well-formed descriptor.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <vector>

#include "loaded_plugin.hpp"
#include "test_paths.hpp"

using namespace px_test;

class Descriptor : public ::testing::TestWithParam<std::string> {};

TEST_P(Descriptor, IsWellFormed) {
  const px_plugin* p = load_plugin(GetParam());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->struct_size, sizeof(px_plugin));
  EXPECT_EQ(p->abi_major, PX_PLUGIN_ABI_MAJOR);
  EXPECT_EQ(p->abi_minor, PX_PLUGIN_ABI_MINOR);
  ASSERT_NE(p->name, nullptr);
  EXPECT_EQ(std::string(p->name), GetParam()) << "the name must match the file name";
  EXPECT_TRUE(std::regex_match(p->name, std::regex("[a-z0-9-]+")));
  ASSERT_NE(p->version, nullptr);
  EXPECT_TRUE(std::regex_match(p->version, std::regex(R"(\d+\.\d+\.\d+)")));
  ASSERT_NE(p->description, nullptr);
  EXPECT_GT(std::string(p->description).size(), 10u);
  ASSERT_NE(p->harness, nullptr);
  EXPECT_FALSE(std::string(p->harness).empty());
  EXPECT_NE(p->detect, nullptr);
  EXPECT_NE(p->contribute, nullptr);
}

TEST_P(Descriptor, EntryReturnsTheSameDescriptorEveryTime) {
  const px_plugin* first = load_plugin(GetParam());
  ASSERT_NE(first, nullptr);
  const std::string file = std::string(PARALLEX_PLUGIN_BUILD_DIR) + "/" + GetParam() + ".so";
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto* entry = reinterpret_cast<px_plugin_entry_fn>(dlsym(handle, PX_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry(), first);
  EXPECT_EQ(entry(), first);
  dlclose(handle);  // drops only this reference; load_plugin keeps its own
}

INSTANTIATE_TEST_SUITE_P(Bundled, Descriptor, ::testing::ValuesIn(bundled_plugins()), [](const auto& test) {
  std::string n = test.param;
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
});

TEST(Descriptor, HarnessPluginsCarrySignInAndGenericDoesNot) {
  for (const char* name : {"claude-code", "codex", "opencode"}) {
    const px_plugin* p = load_plugin(name);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p->carry_sign_in, nullptr) << name;
  }
  const px_plugin* generic = load_plugin("generic");
  ASSERT_NE(generic, nullptr);
  EXPECT_EQ(generic->carry_sign_in, nullptr);
  EXPECT_EQ(generic->parse_transcripts, nullptr);
  EXPECT_EQ(generic->transcript_roots, nullptr);
}

// ABI 1.4: each harness plugin names its files in a home, with the keys in
// them that run commands (what the seal holds back, docs/plugins.md).
TEST(HomeFiles, EachHarnessNamesWhatRunsCommands) {
  struct Seen {
    std::map<std::string, std::pair<px_home_kind, std::vector<std::string>>> files;
    std::string error;
  };
  const auto declared = [](const std::string& name) {
    Seen seen;
    const px_plugin* p = load_plugin(name);
    if (!p || !p->home_files) return seen;
    px_home_file_sink sink{};
    sink.ctx = &seen;
    sink.file = [](void* ctx, const px_home_file* f) {
      std::vector<std::string> settings_keys;
      for (std::size_t i = 0; i < f->key_count; ++i)
        if (f->keys[i].kind == PX_HOME_SETTINGS) settings_keys.emplace_back(f->keys[i].pattern);
      static_cast<Seen*>(ctx)->files[f->path] = {f->kind, settings_keys};
    };
    sink.error = [](void* ctx, const char* m) { static_cast<Seen*>(ctx)->error = m; };
    EXPECT_EQ(p->home_files(PX_PLATFORM_LINUX, &sink), PX_OK);
    return seen;
  };
  const Seen claude = declared("claude-code");
  ASSERT_TRUE(claude.files.count("~/.claude.json")) << claude.error;
  EXPECT_EQ(claude.files.at("~/.claude.json").first, PX_HOME_DATA);
  const auto& keys = claude.files.at("~/.claude.json").second;
  for (const char* k : {"mcpServers", "projects.*.mcpServers", "projects.*.allowedTools"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
  EXPECT_EQ(claude.files.at("~/.claude/settings.json").first, PX_HOME_SETTINGS);
  const Seen codex = declared("codex");
  EXPECT_EQ(codex.files.at("~/.codex").first, PX_HOME_DATA);
  EXPECT_EQ(codex.files.at("~/.codex/config.toml").first, PX_HOME_SETTINGS);
  EXPECT_EQ(codex.files.at("~/.codex/rules").first, PX_HOME_SETTINGS);
  // What a live session writes and runs: each run's own (ABI 1.6).
  for (const char* s :
       {"~/.codex/tmp", "~/.codex/.tmp", "~/.codex/shell_snapshots", "~/.codex/skills/.system"})
    EXPECT_EQ(codex.files.at(s).first, PX_HOME_SCRATCH) << s;
  for (const char* s : {"~/.claude/session-env", "~/.claude/shell-snapshots"})
    EXPECT_EQ(claude.files.at(s).first, PX_HOME_SCRATCH) << s;
  const Seen opencode = declared("opencode");
  EXPECT_EQ(opencode.files.at("~/.config/opencode").first, PX_HOME_SETTINGS);
  EXPECT_EQ(opencode.files.at("~/.local/share/opencode").first, PX_HOME_DATA);
  EXPECT_EQ(opencode.files.at("~/.local/share/opencode/snapshot").first, PX_HOME_SCRATCH);
  EXPECT_TRUE(declared("generic").files.empty());
}
