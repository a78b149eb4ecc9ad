// open_browser: a clean Chromium with a throwaway profile. Inside an agent's
// run it keeps to the agent's network rule.
#include <algorithm>
#include <cctype>

#include "common/ascii.hpp"
#include "mcp/browser.hpp"
#include "mcp/tools.hpp"

namespace px::mcp {
namespace {

constexpr std::size_t kDomInAnswer = 100000;

struct Address {
  std::string scheme;
  std::string host;
};

// http(s)://[user@]host[:port]/... -> scheme and host; about:blank has no host.
std::optional<Address> parse_address(const std::string& url) {
  if (url == "about:blank") return Address{"about", ""};
  const auto colon = url.find("://");
  if (colon == std::string::npos) return std::nullopt;
  Address a;
  a.scheme = ascii_lower(url.substr(0, colon));
  std::string authority = url.substr(colon + 3, url.find_first_of("/?#", colon + 3) - (colon + 3));
  if (auto at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    a.host = authority.substr(1, close - 1);
  } else {
    a.host = authority.substr(0, authority.find(':'));
  }
  if (a.host.empty() || a.host.find_first_of(" \t\r\n") != std::string::npos) return std::nullopt;
  return a;
}

ToolResult open_browser(ToolContext& ctx, const Json& args) {
  const std::string url = args.value("url", std::string("about:blank"));
  auto address = parse_address(url);
  if (!address || (address->scheme != "http" && address->scheme != "https" && address->scheme != "about"))
    return tool_error("\"" + url +
                      "\" is not an http:// or https:// address (or about:blank); open_browser opens "
                      "only web pages.");
  const RunIdentity& run = ctx.run();
  if (run.inside_run) {
    const std::string who = run.agent.empty() ? "This run" : "Agent " + run.agent;
    if (run.network == "offline")
      return tool_error(who + " is offline (its network rule), so no browser is opened from inside its run.");
    if (run.network == "allowlist") {
      if (address->host.empty())
        return tool_error(who +
                          " may reach only its allowed hosts, so only a page on one of them is opened; give "
                          "an address on them.");
      if (!network_allows(run, address->host)) {
        std::string hosts;
        for (const auto& h : run.allowed_hosts) hosts += (hosts.empty() ? "" : ", ") + h;
        return tool_error(address->host + " is not on " + (run.agent.empty() ? "this run" : run.agent) +
                          "'s allowed hosts (" + (hosts.empty() ? std::string("none") : hosts) +
                          "), so it is not opened from inside its run.");
      }
    }
  }
  auto opened = open_clean_browser(url, ctx.options.browser_timeout);
  if (!opened) return tool_error(opened.error());
  const BrowserRun& b = opened.value();
  Json out{{"url", b.url},
           {"headless", b.headless},
           {"profile_dir", b.profile_dir.string()},
           {"profile_was_empty", b.profile_was_empty},
           {"profile_removed", b.profile_removed},
           {"profile_entries_used", b.profile_entries_used},
           {"title", b.title},
           {"pid", b.pid},
           {"note", b.note}};
  if (b.headless) {
    out["dom"] = b.dom.size() > kDomInAnswer ? b.dom.substr(0, kDomInAnswer) : b.dom;
    out["dom_truncated"] = b.dom.size() > kDomInAnswer;
  }
  ToolResult r;
  r.structured = out;
  r.message = b.note;
  return r;
}

}  // namespace

void add_browser_tools(std::vector<Tool>& tools) {
  tools.push_back(
      Tool{"open_browser", "Open a clean browser",
           "Opens an address in a clean Chromium: a new, empty profile signed in to nothing, deleted when "
           "the browser "
           "ends. Inside an agent's run, only when the agent is online or for an address on its allowed "
           "hosts. With "
           "PARALLEX_BROWSER_HEADLESS=1 the page is loaded headless and its DOM returned.",
           object_schema({{"url",
                           {{"type", "string"},
                            {"minLength", 1},
                            {"maxLength", 4096},
                            {"description", "An http:// or https:// address; default about:blank."}}}}),
           object_schema({{"url", {{"type", "string"}}},
                          {"headless", {{"type", "boolean"}}},
                          {"profile_dir", {{"type", "string"}}},
                          {"profile_removed", {{"type", "boolean"}}},
                          {"title", {{"type", "string"}}},
                          {"dom", {{"type", "string"}}}},
                         {"url", "headless", "profile_dir", "profile_removed"}, false),
           false, false, true, open_browser});
}

}  // namespace px::mcp
