// The HTML view: self-contained, escaped, and rendered by a real browser
// (headless Chromium) with every section there. The screenshot is kept under
// the build dir (artifacts/report/) for a human to look at.
#include "report/views.hpp"

#include <gtest/gtest.h>

#include "common/redact.hpp"
#include "report/report.hpp"
#include "test_paths.hpp"
#include "test_support.hpp"

using namespace px_test;
using px::report::Json;

namespace {

Json sample_report(const Scratch& scratch, const Secrets& secrets, SyntheticRun& run) {
  static const auto set = px::pluginhost::PluginSet::load({PARALLEX_PLUGIN_BUILD_DIR});
  px::register_secret(secrets.proxy_password);
  run.build(scratch.root, secrets);
  px::report::ReportRequest req;
  req.agent = "reviewer";
  req.runs_dir = run.runs_dir;
  req.plugins = &set;
  if (!run.allowed_signers.empty()) req.allowed_signers = run.allowed_signers;
  req.selection.last = true;
  return px::report::build_report(req);
}

const char* kSections[] = {"Sessions", "Files read", "Files changed", "Commands",
                           "URLs",     "Hosts",      "Commits",       "Sources"};

}  // namespace

TEST(ReportHtml, SelfContainedAndEscaped) {
  Scratch scratch;
  Secrets secrets;
  SyntheticRun run;
  const std::string html = px::report::render_html(sample_report(scratch, secrets, run));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // No external asset and no script: nothing is loaded from anywhere.
  for (const char* banned : {"<script", "<link", "src=", "http-equiv=\"refresh\"", "@import", "url("})
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  for (const char* section : kSections)
    EXPECT_NE(html.find(std::string(">") + section + "</h3>"), std::string::npos);
}

TEST(ReportHtml, RendersInHeadlessChromium) {
  const std::string chromium =
      find_tool({"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"});
  if (chromium.empty())
    GTEST_SKIP() << "SKIPPED: no chromium on PATH (apt-get install chromium); the HTML view was not rendered";
  Scratch scratch;
  Secrets secrets;
  SyntheticRun run;
  const fs::path artifacts = fs::path(PARALLEX_BINARY_DIR) / "artifacts" / "report";
  fs::create_directories(artifacts);
  const fs::path page = artifacts / "report.html";
  write_text(page, px::report::render_html(sample_report(scratch, secrets, run)));
  const fs::path shot = artifacts / "report.png";
  fs::remove(shot);
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
      "--user-data-dir='" +
      (scratch.root / "chromium-profile").string() + "' ";
  // Chromium writes beside its profile too (crash reports under the config
  // home, dconf's cache): in a home of the test's own, not the developer's.
  const std::string home = (scratch.root / "chromium-home").string();
  const std::string in_own_home = "env HOME='" + home + "' XDG_CONFIG_HOME='" + home +
                                  "/.config' XDG_CACHE_HOME='" + home + "/.cache' XDG_DATA_HOME='" + home +
                                  "/.local/share' ";
  const std::string dom = sh_output(in_own_home + "timeout 90 '" + chromium + "'" + flags +
                                    "--dump-dom 'file://" + page.string() + "' 2>/dev/null");
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  EXPECT_NE(dom.find("<h2>Run <span class=\"id\">" + std::string(kRunId) + "</span></h2>"),
            std::string::npos);
  for (const char* section : kSections)
    EXPECT_NE(dom.find(std::string(">") + section + "</h3>"), std::string::npos) << section;
  // Chromium parsed the planted markup as text, not as an element.
  EXPECT_EQ(dom.find("<script>alert(1)"), std::string::npos);
  sh(in_own_home + "timeout 90 '" + chromium + "'" + flags + "--window-size=1280,2400 --screenshot='" +
     shot.string() + "' 'file://" + page.string() + "' >/dev/null 2>&1");
  ASSERT_TRUE(fs::exists(shot)) << "no screenshot at " << shot;
  EXPECT_GT(fs::file_size(shot), 10'000u) << "the screenshot is suspiciously small";
  std::printf("[ artifact ] %s\n[ artifact ] %s\n", page.c_str(), shot.c_str());
}
