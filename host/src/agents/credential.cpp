#include "agents/credential.hpp"

#include <algorithm>
#include <map>

#include "common/host_rule.hpp"

namespace px::agents {

namespace {

// The name of git's `host` attribute ("name" or "name:port"), normalized as
// credentials name their hosts; a credential is bound to a name on every
// port, as the broker terminates it. Not a name ("[::1]:443"): empty.
std::string host_name(std::string_view host) {
  const auto colon = host.rfind(':');
  if (colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return {};
    host = host.substr(0, colon);
  }
  auto name = parse_exact_host(host);
  return name ? std::move(name).value() : std::string();
}

}  // namespace

std::vector<std::string> github_own_hosts() {
  return {"github.com", "api.github.com", "uploads.github.com"};
}

std::string credential_answer(std::string_view action, std::string_view request,
                              const std::optional<std::string>& token,
                              const std::vector<std::string>& hosts) {
  if (action != "get") return {};  // store and erase: the token lives only in the agent's gh config
  std::map<std::string, std::string, std::less<>> attrs;
  std::size_t pos = 0;
  while (pos < request.size()) {
    std::size_t end = request.find('\n', pos);
    if (end == std::string_view::npos) end = request.size();
    std::string_view line = request.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    attrs.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
  }
  const auto protocol = attrs.find("protocol");
  const auto host = attrs.find("host");
  if (protocol == attrs.end() || host == attrs.end() || protocol->second != "https") return {};
  const std::string name = host_name(host->second);
  if (name.empty() ||
      std::none_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return host_name(h) == name; }))
    return {};
  if (!token) return "quit=1\n";
  return "username=x-access-token\npassword=" + *token + "\n";
}

}  // namespace px::agents
