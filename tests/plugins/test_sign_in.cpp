// Carrying a sign-in: the plugin asks the host to copy a file (it never copies
// itself), or says what the user must do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "loaded_plugin.hpp"

namespace fs = std::filesystem;
using namespace px_test;

class SignIn : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("px-signin-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    user_ = root_ / "user";
    agent_ = root_ / "agent";
    fs::create_directories(user_);
    fs::create_directories(agent_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void touch(const std::string& rel) {
    fs::create_directories((user_ / rel).parent_path());
    std::ofstream(user_ / rel) << "{}";
  }
  SignInResult carry(const std::string& plugin, px_platform platform = PX_PLATFORM_LINUX) {
    const px_plugin* p = load_plugin(plugin);
    if (!p || !p->carry_sign_in) {
      ADD_FAILURE() << plugin << " has no carry_sign_in";
      return {};
    }
    SignInResult r = carry_sign_in(*p, platform, user_.string(), agent_.string());
    EXPECT_EQ(r.rc, PX_OK);
    EXPECT_TRUE(r.errors.empty());
    return r;
  }
  fs::path root_;
  fs::path user_;
  fs::path agent_;
};

TEST_F(SignIn, FilesAreCopiedFromTheUsersHomeToTheAgents) {
  const std::pair<const char*, const char*> cases[] = {{"claude-code", ".claude/.credentials.json"},
                                                       {"codex", ".codex/auth.json"},
                                                       {"opencode", ".local/share/opencode/auth.json"}};
  for (auto [plugin, rel] : cases) {
    touch(rel);
    SignInResult r = carry(plugin);
    ASSERT_EQ(r.copies.size(), 1u) << plugin;
    EXPECT_EQ(r.copies[0].from, (user_ / rel).string());
    EXPECT_EQ(r.copies[0].to, (agent_ / rel).string());
    EXPECT_FALSE(r.copies[0].what.empty());
    EXPECT_TRUE(r.instructions.empty());
  }
}

TEST_F(SignIn, NoSignInToCarryGivesAnInstruction) {
  for (const char* plugin : {"claude-code", "codex", "opencode"}) {
    SignInResult r = carry(plugin);
    EXPECT_TRUE(r.copies.empty()) << plugin;
    ASSERT_EQ(r.instructions.size(), 1u) << plugin;
    EXPECT_NE(r.instructions[0].find(user_.string()), std::string::npos) << "names where it looked";
  }
}

TEST_F(SignIn, ClaudeCodeOnMacOSExplainsTheKeychain) {
  touch(".claude/.credentials.json");  // on macOS the keychain holds it, whatever is on disk
  SignInResult r = carry("claude-code", PX_PLATFORM_MACOS);
  EXPECT_TRUE(r.copies.empty());
  ASSERT_EQ(r.instructions.size(), 1u);
  EXPECT_NE(r.instructions[0].find("keychain"), std::string::npos);
  EXPECT_NE(r.instructions[0].find(agent_.string() + "/.claude/.credentials.json"), std::string::npos);
}

TEST_F(SignIn, CodexAndOpencodeCopyOnMacOSToo) {
  touch(".codex/auth.json");
  touch(".local/share/opencode/auth.json");
  EXPECT_EQ(carry("codex", PX_PLATFORM_MACOS).copies.size(), 1u);
  EXPECT_EQ(carry("opencode", PX_PLATFORM_MACOS).copies.size(), 1u);
}
