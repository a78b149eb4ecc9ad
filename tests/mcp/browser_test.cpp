// The browsers: open_browser starts a headless Chromium (PARALLEX_BROWSER_HEADLESS=1)
// against a page served on loopback, in a fresh profile that is gone
// afterwards; an agent's own profile is red, named, and signed in to nothing.
#include "mcp/browser.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "mcp_test_support.hpp"

namespace px::mcp::test {
namespace {

// Serves one page on 127.0.0.1 (any path) until stopped; bounded in time.
class LoopbackPage {
 public:
  explicit LoopbackPage(std::string body) : body_(std::move(body)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~LoopbackPage() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/page"; }
  int requests() const { return requests_; }

 private:
  void loop() {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!stop_ && std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      char buf[4096];
      pollfd cp{c, POLLIN, 0};
      if (::poll(&cp, 1, 2000) > 0 && ::read(c, buf, sizeof buf) > 0) {
        ++requests_;
        const std::string reply =
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
            std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
        (void)!::write(c, reply.data(), reply.size());
      }
      ::close(c);
    }
  }

  std::string body_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

class McpBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_chromium()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    ::setenv("PARALLEX_BROWSER_HEADLESS", "1", 1);
  }
  void TearDown() override { ::unsetenv("PARALLEX_BROWSER_HEADLESS"); }
};

const char* kPage =
    "<!doctype html><html><head><title>Parallex loopback page</title></head>"
    "<body><p id=m>served-on-loopback</p><script>document.getElementById('m').textContent += '-and-scripted';"
    "</script></body></html>";

TEST_F(McpBrowser, OpenBrowserLoadsALoopbackPageInAFreshProfileThatIsGoneAfterwards) {
  LoopbackPage page(kPage);
  ServerOptions o;
  o.browser_timeout = std::chrono::seconds(60);
  auto replies = serve(init() + call(1, "open_browser", {{"url", page.url()}}), o);
  const Json& r = *reply_to(replies, 1);
  ASSERT_FALSE(r["result"]["isError"].get<bool>()) << text_of(r);
  const Json& s = r["result"]["structuredContent"];
  EXPECT_TRUE(s["headless"].get<bool>());
  EXPECT_EQ(s["title"], "Parallex loopback page");
  EXPECT_NE(s["dom"].get<std::string>().find("served-on-loopback-and-scripted"), std::string::npos)
      << s["dom"];
  EXPECT_GE(page.requests(), 1);
  // Fresh: made empty for this browser, used by it, and removed after.
  EXPECT_TRUE(s["profile_was_empty"].get<bool>());
  EXPECT_GT(s["profile_entries_used"].get<int>(), 0);
  EXPECT_TRUE(s["profile_removed"].get<bool>());
  EXPECT_FALSE(fs::exists(s["profile_dir"].get<std::string>()));

  // A second call gets another profile.
  auto again = serve(init() + call(1, "open_browser", {{"url", page.url()}}), o);
  EXPECT_NE((*reply_to(again, 1))["result"]["structuredContent"]["profile_dir"], s["profile_dir"]);
}

TEST_F(McpBrowser, InsideARunAnAllowedHostIsOpened) {
  LoopbackPage page(kPage);
  ServerOptions o;
  o.run.inside_run = true;
  o.run.agent = "a";
  o.run.network = "allowlist";
  o.run.allowed_hosts = {"127.0.0.1"};
  auto replies = serve(init() + call(1, "open_browser", {{"url", page.url()}}), o);
  const Json& r = *reply_to(replies, 1);
  ASSERT_FALSE(r["result"]["isError"].get<bool>()) << text_of(r);
  EXPECT_EQ(r["result"]["structuredContent"]["title"], "Parallex loopback page");
}

TEST_F(McpBrowser, TheAgentsOwnProfileIsMarkedAndSignedInToNothing) {
  TempHome home;
  const fs::path agent_root = home.add_agent("reviewer");
  auto profile = create_agent_browser_profile(agent_root, "reviewer");
  ASSERT_TRUE(profile) << profile.error().message;
  // Not in the agent's home, which its runs write (Chromium runs unsealed, as the user).
  EXPECT_EQ(profile.value().user_data_dir, agent_root / "browser" / "chromium");
  EXPECT_FALSE(fs::exists(agent_root / "home" / ".parallex"));
  EXPECT_EQ(profile.value().window_name, "reviewer (agent)");
  const Json prefs = Json::parse(TempHome::read(profile.value().user_data_dir / "Default" / "Preferences"));
  EXPECT_EQ(prefs["browser"]["theme"]["user_color"], static_cast<std::int32_t>(0xFFD32F2F - 0x100000000LL));
  EXPECT_EQ(prefs["signin"]["allowed"], false);
  EXPECT_EQ(prefs["profile"]["name"], "reviewer (agent)");
  const Json marker = Json::parse(TempHome::read(profile.value().user_data_dir / "parallex-agent.json"));
  EXPECT_EQ(marker["agent"], "reviewer");

  // Opening it loads the page in that profile, which stays (it is the agent's).
  LoopbackPage page(kPage);
  auto opened = open_agent_browser(agent_root, "reviewer", page.url(), std::chrono::seconds(60));
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_NE(opened.value().dom.find("served-on-loopback"), std::string::npos);
  EXPECT_TRUE(fs::exists(profile.value().user_data_dir / "Default"));
  // Chromium kept our marks when it rewrote its preferences.
  const Json after = Json::parse(TempHome::read(profile.value().user_data_dir / "Default" / "Preferences"));
  EXPECT_EQ(after["signin"]["allowed"], false);
  EXPECT_EQ(after["profile"]["name"], "reviewer (agent)");
  EXPECT_EQ(after["browser"]["theme"]["user_color"], static_cast<std::int32_t>(0xFFD32F2F - 0x100000000LL));
}

// The profile's files are read as input from outside (Chromium writes them; an older Parallex kept
// them in the agent's home, which its runs write): a file nested 300,000 deep, which printing would
// recurse through, and a link to a file of the user's are started afresh, never followed or
// crashed on.
TEST_F(McpBrowser, APlantedProfileIsStartedAfreshNotFollowed) {
  TempHome home;
  const fs::path agent_root = home.add_agent("planter");
  const fs::path chromium = agent_root / "browser" / "chromium";
  fs::create_directories(chromium / "Default");
  const std::size_t n = 300000;
  std::string deep = "{\"x\":";
  for (std::size_t i = 0; i < n; ++i) deep += "{\"a\":";
  deep += "1" + std::string(n + 1, '}');
  std::ofstream(chromium / "Default" / "Preferences") << deep;
  const fs::path secret = home.dir() / "secret.json";
  std::ofstream(secret) << R"({"token": "s3cr3t"})";
  fs::create_symlink(secret, chromium / "Local State");
  auto profile = create_agent_browser_profile(agent_root, "planter");
  ASSERT_TRUE(profile) << profile.error().message;
  const Json prefs = Json::parse(TempHome::read(chromium / "Default" / "Preferences"));
  EXPECT_FALSE(prefs.contains("x"));
  EXPECT_EQ(prefs["profile"]["name"], "planter (agent)");
  const Json local = Json::parse(TempHome::read(chromium / "Local State"));
  EXPECT_FALSE(local.contains("token")) << "the link was followed";
  EXPECT_FALSE(fs::is_symlink(chromium / "Local State"));
  EXPECT_EQ(TempHome::read(secret), R"({"token": "s3cr3t"})");
}

TEST(McpBrowserMissing, SaysHowToInstallChromium) {
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", "/nonexistent", 1);
  ::unsetenv("PARALLEX_CHROMIUM");
  ::setenv("PARALLEX_BROWSER_HEADLESS", "1", 1);
  auto replies = serve(init() + call(1, "open_browser", {{"url", "http://127.0.0.1:9/"}}));
  ::setenv("PATH", saved.c_str(), 1);
  ::unsetenv("PARALLEX_BROWSER_HEADLESS");
  const Json& r = *reply_to(replies, 1);
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(text_of(r).find("apt-get install chromium"), std::string::npos) << text_of(r);
}

}  // namespace
}  // namespace px::mcp::test
