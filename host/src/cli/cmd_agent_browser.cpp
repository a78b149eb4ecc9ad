// `parallex agent browser NAME [URL]`: opens the agent's own Chromium, a
// profile in its home marked as the agent's (red theme, its name in the
// window title), signed in to nothing of the user's. Made on first use.
#include <cstdio>
#include <iostream>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/redact.hpp"
#include "mcp/agent_source.hpp"
#include "mcp/browser.hpp"

namespace px::cli {
namespace {

struct AgentBrowserOptions {
  std::string name;
  std::string url = "about:blank";
  bool create_only = false;
};

int run(const AgentBrowserOptions& o) {
  auto agent = mcp::load_agent(o.name);
  if (!agent) return report_error(agent.error());
  const auto home = agent.value().home();
  if (o.create_only) {
    auto profile = mcp::create_agent_browser_profile(home, o.name);
    if (!profile) return report_error(profile.error());
    std::printf("Agent %s's Chromium profile is %s.\n", o.name.c_str(),
                profile.value().user_data_dir.c_str());
    return 0;
  }
  auto opened = mcp::open_agent_browser(home, o.name, o.url, std::chrono::seconds(30));
  if (!opened) return report_error(opened.error());
  if (opened.value().headless) {
    std::cout << redact(opened.value().dom) << std::flush;
    return 0;
  }
  std::printf("%s (profile %s)\n", opened.value().note.c_str(), opened.value().profile_dir.c_str());
  return 0;
}

Action setup_agent_browser(CLI::App& app) {
  auto o = std::make_shared<AgentBrowserOptions>();
  app.add_option("name", o->name, "The agent")->required();
  app.add_option("url", o->url, "The address to open (default about:blank)");
  app.add_flag("--create-only", o->create_only, "Make the profile without opening the browser");
  return [o]() { return run(*o); };
}

}  // namespace

PARALLEX_SUBCOMMAND("agent", "browser",
                    "Open an agent's own Chromium (red, its name in the title, signed in to nothing)", 60,
                    setup_agent_browser);

}  // namespace px::cli
