#pragma once
// Browsers for agents and for the MCP server: an agent's own Chromium profile
// (in Parallex's data folder, red-themed, named in the window title, signed in to nothing),
// and a clean Chromium with a throwaway profile that is deleted afterwards.
// Chromium's own output never reaches our stdout: that is the MCP channel.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::mcp {

namespace fs = std::filesystem;

// PARALLEX_CHROMIUM, else chromium, chromium-browser, google-chrome on $PATH.
std::optional<fs::path> find_chromium();
// Says that no Chromium was found and how to install it.
Error chromium_missing();
// PARALLEX_BROWSER_HEADLESS=1 (tests, machines without a display).
bool headless_requested();

struct AgentBrowserProfile {
  fs::path user_data_dir;  // <agent root>/browser/chromium
  std::string window_name;
};

// The agent's browser's own folder, <agent root>/browser: Chromium's HOME (its
// NSS database, caches, crash reports) with the profile inside. Not in the
// agent's home: its runs write that, and this Chromium runs unsealed, as you,
// trusting what its HOME and profile name (a PKCS#11 module listed in
// ~/.pki/nssdb/pkcs11.txt is loaded into it at its first certificate check).
// Parallex's data folder, which holds it, is out of every run's reach.
fs::path agent_browser_dir(const fs::path& agent_root);
// The Chromium profile folder of an agent's browser, in agent_browser_dir.
fs::path agent_browser_profile_dir(const fs::path& agent_root);

// Makes (or refreshes the marks of) the agent's Chromium profile: Local State
// and Default/Preferences with a red theme, the profile named after the agent,
// sign-in and sync off, and a marker file naming the agent. Nothing of the
// user's profile is copied. Safe to call again: other preferences the browser
// wrote are kept.
Result<AgentBrowserProfile> create_agent_browser_profile(const fs::path& agent_root,
                                                         const std::string& agent_name);

// The flags every browser we start gets (no first run, no background
// networking, no sync; --no-sandbox where Chromium's own sandbox cannot start:
// as root, or under no_new_privs).
std::vector<std::string> base_browser_flags(bool headless);

struct BrowserRun {
  std::string url;
  bool headless = false;
  fs::path profile_dir;
  bool profile_was_empty = false;
  std::size_t profile_entries_used = 0;  // entries Chromium wrote in the profile (headless)
  bool profile_removed = false;          // headless: removed; windowed: removed when the window closes
  std::string dom;                       // headless: the page's DOM (--dump-dom)
  std::string title;
  int exit_status = 0;
  long pid = 0;
  std::string note;
};

// Opens `url` in a clean Chromium whose --user-data-dir is a new empty temp
// folder, deleted when the browser ends. Headless: waits (up to `timeout`) for
// the page's DOM. Windowed: needs a display; returns once it is started.
Result<BrowserRun> open_clean_browser(const std::string& url, std::chrono::seconds timeout);

// Opens the agent's own profile (creating it if needed) with `url`.
// Headless: the page's DOM in `dom`.
Result<BrowserRun> open_agent_browser(const fs::path& agent_root, const std::string& agent_name,
                                      const std::string& url, std::chrono::seconds timeout);

// "<title>" of a DOM, empty when it has none.
std::string title_of(const std::string& dom);

}  // namespace px::mcp
