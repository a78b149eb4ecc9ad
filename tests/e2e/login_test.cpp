// The real clients' sign-ins inside a seal (docs/opener.md): what they ask to
// open reaches the user's terminal and the run's events, and nothing opens.
// - `claude setup-token` (the same sign-in as `/login`) runs $BROWSER with its
//   OAuth address; it is a TUI, so it runs on a terminal (`script`), and the
//   line waits for the run's end rather than drawing over it.
// - `codex login` runs $BROWSER (the Rust webbrowser crate) with its address.
// - `codex login --device-auth` opens nothing: it prints the address and the
//   code itself. Its sign-in server is a local stand-in here
//   (device_auth_server.py, through --experimental_issuer): there is no
//   network beyond the package registries.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/paths.hpp"
#include "scratch.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Login : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!px::test::have("python3")) GTEST_SKIP() << "SKIPPED: python3 is needed";
    // Under the build dir, not /tmp: Codex refuses to set up its helpers under a temp dir.
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "e2e-login-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "home/.codex", "work", "out", "fakebin", "state"})
      fs::create_directories(root_ / d);
    for (const char* b : {"xdg-open", "firefox", "www-browser", "x-www-browser", "sensible-browser"}) {
      const fs::path f = root_ / "fakebin" / b;
      std::ofstream(f) << "#!/bin/sh\ntouch " << (root_ / "work" / "BROWSER-STARTED").string() << "\n";
      ::chmod(f.c_str(), 0755);
    }
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }
  std::vector<std::string> env() const {
    return {"HOME=" + (root_ / "home").string(),
            "CODEX_HOME=" + (root_ / "home/.codex").string(),
            "PATH=" + (root_ / "fakebin").string() + ":/usr/local/bin:/usr/bin:/bin",
            "LANG=C.UTF-8",
            "TERM=xterm",
            "XDG_STATE_HOME=" + (root_ / "state").string(),
            "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
  }
  std::vector<json> opened() const {
    std::vector<json> out;
    for (auto it = fs::recursive_directory_iterator(root_ / "state");
         it != fs::recursive_directory_iterator(); ++it) {
      if (it->path().filename() != "events.jsonl") continue;
      std::ifstream in(it->path());
      for (std::string line; std::getline(in, line);)
        if (auto j = json::parse(line, nullptr, false);
            !j.is_discarded() && j["type"] == "run.open_requested")
          out.push_back(j);
    }
    return out;
  }
  bool browser_started() const { return fs::exists(root_ / "work" / "BROWSER-STARTED"); }
  std::string parallex_run(const std::string& flags) const {
    return std::string(PARALLEX_EXE) + " run --in " + (root_ / "work").string() + " " + flags + " -- ";
  }

  fs::path root_;
};

TEST_F(Login, ClaudeSetupTokenAddressIsShownNotOpened) {
  if (!px::test::have("claude"))
    GTEST_SKIP() << "SKIPPED: claude is not installed (npm i -g @anthropic-ai/claude-code)";
  if (!px::test::have("script")) GTEST_SKIP() << "SKIPPED: script (util-linux) gives the TUI its terminal";
  // The supervisor ends the run after 12 s (SIGTERM), then prints what waited.
  const std::string typescript = (root_ / "out/typescript").string();
  const auto o = px::test::spawn_and_wait(
      {"script", "-qec", "timeout --foreground -s TERM 12 " + parallex_run("") + "claude setup-token",
       typescript},
      env(), root_ / "out", std::chrono::seconds(60));
  const std::string term = px::test::slurp(typescript);
  const auto ev = opened();
  ASSERT_EQ(ev.size(), 1u) << term;
  const std::string url = ev[0]["url"];
  EXPECT_EQ(url.rfind("https://claude.com/cai/oauth/authorize?", 0), 0u) << url;
  EXPECT_EQ(ev[0]["in_rule"], false);
  EXPECT_NE(ev[0].value("process", "").find("claude"), std::string::npos) << ev[0].dump();
  // On the terminal, once the TUI is gone: the whole address.
  const auto line = term.find("parallex: the run asked to open " + url.substr(0, 60));
  ASSERT_NE(line, std::string::npos) << term;
  EXPECT_GT(line, term.find("received SIGTERM")) << "drawn over the TUI while it held the terminal";
  EXPECT_FALSE(browser_started());
}

TEST_F(Login, CodexLoginAddressIsShownNotOpened) {
  if (!px::test::have("codex")) GTEST_SKIP() << "SKIPPED: codex is not installed (npm i -g @openai/codex)";
  // Its login server waits for the browser's callback: the run is ended after 8 s.
  const auto o =
      px::test::spawn_and_wait({"sh", "-c", "timeout -s TERM 8 " + parallex_run("") + "codex login"}, env(),
                               root_ / "out", std::chrono::seconds(60));
  const auto ev = opened();
  ASSERT_EQ(ev.size(), 1u) << o.out << o.err;
  const std::string url = ev[0]["url"];
  EXPECT_EQ(url.rfind("https://auth.openai.com/oauth/authorize?", 0), 0u) << url;
  EXPECT_NE(o.err.find("parallex: the run asked to open " + url + " "), std::string::npos) << o.err;
  EXPECT_FALSE(browser_started());
}

TEST_F(Login, CodexDeviceAuthPrintsItsAddressAndOpensNothing) {
  if (!px::test::have("codex")) GTEST_SKIP() << "SKIPPED: codex is not installed (npm i -g @openai/codex)";
  const int port = 20000 + static_cast<int>(::getpid() % 20000);
  px::test::Background server({"python3",
                               std::string(PARALLEX_SOURCE_DIR) + "/tests/e2e/device_auth_server.py",
                               std::to_string(port)});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string issuer = "http://127.0.0.1:" + std::to_string(port);
  const auto o = px::test::spawn_and_wait(
      {"sh", "-c",
       "timeout -s TERM 8 " + parallex_run("--local-servers=" + std::to_string(port)) +
           "codex login --device-auth --experimental_issuer " + issuer},
      env(), root_ / "out", std::chrono::seconds(60));
  EXPECT_NE(o.out.find(issuer + "/codex/device"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out.find("WXYZ-1234"), std::string::npos) << o.out;
  EXPECT_TRUE(opened().empty()) << "codex --device-auth asked to open a page after all";
  EXPECT_FALSE(browser_started());
}

}  // namespace
