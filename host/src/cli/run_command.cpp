#include "cli/run_command.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "cli/output.hpp"
#include "common/redact.hpp"
#include "proxy/reasons.hpp"

namespace px::cli {

namespace {

// Prints each notice once (a live notice is also in the final record).
class NoticePrinter {
 public:
  explicit NoticePrinter(const RunCommandHooks& hooks)
      : hooks_(hooks), seen_(hooks.said_already.begin(), hooks.said_already.end()) {}
  void print(const run::Notice& n) {
    std::lock_guard lock(mu_);
    if (!seen_.insert(n.text).second) return;
    if (hooks_.notice) hooks_.notice(n);
    const bool verbose = spdlog::get_level() <= spdlog::level::debug;
    if (!run::printed_by_default(n.kind) && !verbose) return;
    const std::string prefix = n.kind == run::NoticeKind::weaker_seal ? "weaker seal: "
                               : n.kind == run::NoticeKind::timing    ? "timing: "
                                                                      : "";
    say(prefix + n.text);
    std::fflush(stderr);
  }

 private:
  const RunCommandHooks& hooks_;
  std::mutex mu_;
  std::set<std::string> seen_;
};

}  // namespace

namespace {

// What lets the refused requests of one reason through next time, naming
// every host they went to; empty where nothing should (a malformed request, a
// paused run).
std::string fix_for(const std::string& reason, const std::vector<const run::RefusedRequest*>& items,
                    const RefusalContext* run) {
  const bool in_run = run != nullptr;
  // Each distinct flag once, in the order the hosts are listed.
  auto flags = [&](bool with_port) {
    std::vector<std::string> seen;
    std::string out;
    for (const auto* r : items) {
      if (r->host.empty()) continue;
      const std::string value =
          r->host + (with_port && !r->dns && r->port ? ":" + std::to_string(r->port) : "");
      if (std::find(seen.begin(), seen.end(), value) != seen.end()) continue;
      seen.push_back(value);
      out += (out.empty() ? "--allow " : " --allow ") + value;
    }
    return out.empty() ? std::string("--allow HOST") : out;
  };
  const bool many = items.size() > 1;
  if (reason == "blocked-by-allowlist" || reason == "network-offline") {
    const std::string allow = flags(false);
    const bool agent = in_run && !run->agent.empty();
    return std::string(many ? "to allow them" : "to allow it") + ", run again with " + allow +
           " (or --online); " +
           (agent ? "for every run of agent " + run->agent + ", `parallex agent set " + run->agent + " "
                  : std::string("for an agent, `parallex agent set NAME ")) +
           allow + "`";
  }
  if (reason == "port-not-allowed")
    return std::string(many ? "to allow those ports" : "to allow that port") + ", run again with " +
           flags(true);
  if (reason == "local-servers-off" || reason == "resolved-to-local-address") {
    std::vector<std::uint16_t> ports;
    for (const auto* r : items)
      if (r->port && std::find(ports.begin(), ports.end(), r->port) == ports.end()) ports.push_back(r->port);
    std::string list;
    for (const auto p : ports) list += (list.empty() ? "" : ",") + std::to_string(p);
    return "a server on this machine: run again with --local-servers (or --local-servers=" +
           (list.empty() ? std::string("3000") : list) + ")";
  }
  // Asked without the password and never with it (a challenge answered is no refusal).
  if (reason == "proxy-auth-required")
    return in_run ? "asked the run's proxy without its password, and never with it: a program must take the "
                    "proxy from HTTPS_PROXY or HTTP_PROXY as the run gives them (they carry the password)"
                  : "asked without the proxy's password, and never with it: clients send the one in its "
                    "password file (--password-file) as Proxy-Authorization: Basic";
  if (reason == "ip-literal-refused")
    return "name the host rather than its address, and allow the name with --allow";
  if (reason == "too-many-connections")
    return "the run had more connections open at once than its proxy takes (512); each one past that was "
           "refused at once";
  return {};
}

// A harness's calls home that it makes for its own sake once the user pointed
// it at a model server of theirs: its telemetry and feature flags (Claude
// Code), its telemetry and its plugins' sync (Codex), which the harness's own
// switches turn off. Allowing the host would only let them out. Only its
// vendor's hosts are said so: Codex's sync also calls github.com, which a
// command of the run may need for its own work, so that one keeps its --allow.
struct OwnTraffic {
  const char* harness;
  const char* base_url;    // set: the harness talks to the user's server
  const char* domain;      // its vendor's hosts: this name or under it
  const char* quieted_by;  // a variable whose presence says the user quieted it already, or none
  const char* what;
  const char* fix;  // the switches that quiet it, and where they go
};
constexpr OwnTraffic kOwnTraffic[] = {
    {"claude-code", "ANTHROPIC_BASE_URL", "anthropic.com", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
     "Claude Code's own traffic (telemetry, feature flags)",
     "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 parallex run "
     "...)"},
    {"codex", "OPENAI_BASE_URL", "chatgpt.com", nullptr,
     "Codex's own traffic (telemetry; its plugins' sync, which calls github.com too)",
     "-c analytics.enabled=false -c features.plugins=false (parallex run ... -- codex exec -c "
     "analytics.enabled=false -c features.plugins=false ...; or in ~/.codex/config.toml: [analytics] "
     "enabled = false and [features] plugins = false)"},
};

const OwnTraffic* own_traffic(const RefusalContext* run, const std::string& host) {
  if (run == nullptr) return nullptr;
  for (const auto& t : kOwnTraffic) {
    const std::string domain = t.domain;
    const bool vendor = host == domain || (host.size() > domain.size() && host.ends_with("." + domain));
    const auto base = run->env.find(t.base_url);
    if (vendor && run->harness == t.harness && base != run->env.end() && !base->second.empty() &&
        (t.quieted_by == nullptr || run->env.count(t.quieted_by) == 0))
      return &t;
  }
  return nullptr;
}

}  // namespace

std::string format_refused(const std::vector<run::RefusedRequest>& refused, std::string_view log_name,
                           const RefusalContext* run) {
  if (refused.empty()) return {};
  std::map<std::string, std::vector<const run::RefusedRequest*>> by_reason;
  std::vector<const OwnTraffic*> quiet;
  std::uint64_t total = 0;
  std::uint64_t failed = 0;  // allowed, but their host was not reached
  for (const auto& r : refused) {
    total += r.count;
    if (proxy::reason::is_upstream_failure(r.reason)) failed += r.count;
    if (const OwnTraffic* t = own_traffic(run, r.host)) {
      if (std::find(quiet.begin(), quiet.end(), t) == quiet.end()) quiet.push_back(t);
      by_reason["its own traffic"].push_back(&r);
      continue;
    }
    by_reason[r.reason].push_back(&r);
  }
  // The run's DNS refuses names as its proxy refuses connections: both are said.
  const bool all_dns = std::all_of(refused.begin(), refused.end(), [](const auto& r) { return r.dns; });
  const auto requests = [](std::uint64_t n) {
    return std::to_string(n) + (n == 1 ? " request" : " requests");
  };
  std::string out;
  if (all_dns)
    out = "parallex: the run's DNS refused " + std::to_string(total) + (total == 1 ? " query" : " queries");
  else if (failed == total)
    out = "parallex: the run's proxy could not reach the host of " + requests(failed);
  else if (failed > 0)
    out = "parallex: the run's proxy refused " + requests(total - failed) +
          " and could not reach the host of " + std::to_string(failed) + " more";
  else
    out = "parallex: the run's proxy refused " + requests(total);
  if (!log_name.empty()) out += " (see " + std::string(log_name) + ")";
  out += ":\n";
  for (const auto& [reason, items] : by_reason) {
    out += "  " + reason + ":";
    for (const auto* r : items) {
      out += " " + (!r->host.empty() ? r->host
                    : reason == "too-many-connections"
                        ? std::string("(a client of the proxy, its request unread)")
                        : std::string("(unreadable request)"));
      if (r->dns)
        out += " (DNS query)";
      else if (r->port)
        out += ":" + std::to_string(r->port);
      if (r->count > 1) out += " (x" + std::to_string(r->count) + ")";
    }
    out += "\n";
    if (reason == "its own traffic") {
      for (const auto* t : quiet)
        out += "    " + std::string(t->what) + ", while " + t->base_url +
               " names your server: quiet it with " + t->fix + "\n";
    } else if (const std::string fix = fix_for(reason, items, run); !fix.empty()) {
      out += "    " + fix + "\n";
    }
  }
  return out;
}

int run_command(run::RunInputs inputs, const RunCommandHooks& hooks) {
  auto prepared = run::prepare_run(std::move(inputs));
  if (!prepared) {
    if (hooks.failed) hooks.failed(prepared.error());
    say(prepared.error().message);
    return run::kExitSetupFailed;
  }
  NoticePrinter printer(hooks);
  for (const auto& n : prepared.value().plan.notices) printer.print(n);
  const RefusalContext context{prepared.value().plan.policy.harness(), prepared.value().plan.env,
                               prepared.value().plan.agent};
  if (hooks.prepared) hooks.prepared(prepared.value().plan);
  std::fflush(stdout);
  supervisor::RunObserver observer;
  observer.notice = [&printer](const run::Notice& n) { printer.print(n); };
  auto result = run::execute(std::move(prepared).value(), observer);
  if (!result) {
    if (hooks.failed) hooks.failed(result.error());
    say(result.error().message);
    return run::kExitSetupFailed;
  }
  const run::RunRecord& r = result.value().record;
  for (const auto& n : r.notices) printer.print(n);
  if (!r.setup_error.empty()) say(r.setup_error);
  std::fputs(format_refused(r.refused, "the run's proxy.jsonl", &context).c_str(), stderr);
  if (hooks.finished) hooks.finished(result.value());
  return result.value().exit_status();
}

}  // namespace px::cli
