#include "mcp/run_identity.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/ascii.hpp"

namespace px::mcp {
namespace {

std::vector<std::string> split_hosts(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(ascii_lower(item));
  }
  return out;
}

}  // namespace

Getenv process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

RunIdentity detect_run_identity(const Getenv& env, const std::filesystem::path& proc_status) {
  RunIdentity r;
  auto get = [&](const char* name) { return env(name).value_or(""); };
  r.inside_run = get("PARALLEX_RUN") == "1" || !get("PARALLEX_RUN_ID").empty();
  std::ifstream status(proc_status);
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("NoNewPrivs:", 0) == 0) r.seal.no_new_privs = line.find('1') != std::string::npos;
    if (line.rfind("Seccomp:", 0) == 0) r.seal.seccomp = std::atoi(line.c_str() + 8);
  }
  if (!r.inside_run) return r;
  r.run_id = get("PARALLEX_RUN_ID");
  r.agent = get("PARALLEX_AGENT");
  r.network = get("PARALLEX_NETWORK");
  // An unknown or missing rule inside a run is taken as the strictest one.
  if (r.network != "online" && r.network != "allowlist") r.network = "offline";
  if (r.network == "allowlist") r.allowed_hosts = split_hosts(get("PARALLEX_ALLOWED_HOSTS"));
  r.seal.claimed = get("PARALLEX_SEALED") == "1";
  return r;
}

bool network_allows(const RunIdentity& run, const std::string& host_in) {
  if (!run.inside_run || run.network == "online") return true;
  if (run.network != "allowlist") return false;
  std::string host = ascii_lower(host_in);
  if (!host.empty() && host.back() == '.') host.pop_back();
  if (host.empty()) return false;
  for (std::string allowed : run.allowed_hosts) {
    if (allowed.rfind("*.", 0) == 0) allowed = allowed.substr(2);
    if (host == allowed) return true;
    if (host.size() > allowed.size() &&
        host.compare(host.size() - allowed.size(), allowed.size(), allowed) == 0 &&
        host[host.size() - allowed.size() - 1] == '.')
      return true;
  }
  return false;
}

Json to_json(const RunIdentity& run) {
  Json seal{{"claimed", run.seal.claimed},
            {"no_new_privs", run.seal.no_new_privs},
            {"seccomp_filter", run.seal.seccomp == 2},
            {"verified", run.seal.verified()}};
  return Json{{"inside_run", run.inside_run},
              {"run_id", run.run_id},
              {"agent", run.agent},
              {"network", run.network},
              {"allowed_hosts", run.allowed_hosts},
              {"seal", seal}};
}

}  // namespace px::mcp
