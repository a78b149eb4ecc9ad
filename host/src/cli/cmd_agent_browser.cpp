// `parallex agent browser NAME [URL]`: opens the agent's own Chromium, a
// profile in the agent's folder of Parallex's data (not its home, which its
// runs write) marked as the agent's (red theme, its name in the window
// title), signed in to nothing of the user's. Made on first use.
#include <cstdio>
#include <filesystem>
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
  const auto root = agent.value().root;
  // Its profile lived in its home before, where its runs could plant what this unsealed browser
  // would load: that folder is no longer used (nor removed: it is the agent's).
  const std::filesystem::path old_profile = agent.value().home() / ".parallex" / "chromium";
  std::error_code ec;
  if (std::filesystem::exists(old_profile, ec))
    say("the browser profile in " + o.name + "'s home (" + old_profile.string() +
        ") is no longer used: its runs could write it. This one is in Parallex's data folder; sign in "
        "again there. The old folder can be removed.");
  if (o.create_only) {
    auto profile = mcp::create_agent_browser_profile(root, o.name);
    if (!profile) return report_error(profile.error());
    std::printf("Agent %s's Chromium profile is %s.\n", o.name.c_str(),
                profile.value().user_data_dir.c_str());
    return 0;
  }
  auto opened = mcp::open_agent_browser(root, o.name, o.url, std::chrono::seconds(30));
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
