#include "agents/credential.hpp"

#include <map>

namespace px::agents {

std::string credential_answer(std::string_view action, std::string_view request,
                              const std::optional<std::string>& token) {
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
  std::string h = host->second;
  for (auto& c : h) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (h != "github.com" && h != "github.com:443") return {};
  if (!token) return "quit=1\n";
  return "username=x-access-token\npassword=" + *token + "\n";
}

}  // namespace px::agents
