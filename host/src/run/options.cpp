#include "run/options.hpp"

namespace px::run {

std::vector<std::string> RunOptions::describe() const {
  std::vector<std::string> out;
  if (harness) out.push_back("--harness " + *harness);
  if (profile) out.push_back("--profile " + *profile);
  if (!in.empty()) out.push_back("--in " + in);
  for (const auto& g : grants) out.push_back("--grant " + g);
  if (online) out.push_back("--online");
  if (offline) out.push_back("--offline");
  for (const auto& h : allow) out.push_back("--allow " + h);
  if (!local_servers.empty())
    out.push_back(local_servers == "every" ? "--local-servers" : "--local-servers=" + local_servers);
  for (const auto& p : publish) out.push_back("--publish " + p);
  if (!ask.empty()) out.push_back(ask == "on" ? "--ask" : "--ask=" + ask);
  for (const auto& e : env) {
    const auto eq = e.find('=');
    out.push_back(eq == std::string::npos ? "--env " + e
                                          : "--env " + e.substr(0, eq) + "=(value not recorded)");
  }
  for (const auto& w : dangerously_writable) out.push_back("--dangerously-writable " + w);
  if (unsealed) out.push_back("--unsealed");
  if (allow_weaker_seal) out.push_back("--allow-weaker-seal");
  if (allow_system_folder) out.push_back("--allow-system-folder");
  return out;
}

}  // namespace px::run
