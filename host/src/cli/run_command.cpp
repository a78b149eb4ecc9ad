#include "cli/run_command.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "common/redact.hpp"

namespace px::cli {

namespace {

// Prints each notice once (a live notice is also in the final record).
class NoticePrinter {
 public:
  explicit NoticePrinter(const RunHooks& hooks) : hooks_(hooks), seen_(hooks.said_already.begin(), hooks.said_already.end()) {}
  void print(const run::Notice& n) {
    std::lock_guard lock(mu_);
    if (!seen_.insert(n.text).second) return;
    if (hooks_.notice) hooks_.notice(n);
    const bool verbose = spdlog::get_level() <= spdlog::level::debug;
    if (!run::printed_by_default(n.kind) && !verbose) return;
    const char* prefix = n.kind == run::NoticeKind::weaker_seal ? "weaker seal: "
                         : n.kind == run::NoticeKind::timing    ? "timing: "
                                                                : "";
    std::fprintf(stderr, "parallex: %s%s\n", prefix, redact(n.text).c_str());
    std::fflush(stderr);
  }

 private:
  const RunHooks& hooks_;
  std::mutex mu_;
  std::set<std::string> seen_;
};

}  // namespace

namespace {

// What lets a refused request through next time, by the proxy's reason;
// empty where nothing should (a malformed request, a paused run).
std::string fix_for(const std::string& reason, const run::RefusedRequest& example) {
  const std::string host = example.host.empty() ? "HOST" : example.host;
  if (reason == "blocked-by-allowlist" || reason == "network-offline")
    return "to allow it, run again with --allow " + host +
           " (or --online); for an agent, `parallex agent set NAME --allow " + host + "`";
  if (reason == "port-not-allowed")
    return "to allow that port, run again with --allow " + host + ":" + std::to_string(example.port);
  if (reason == "local-servers-off" || reason == "resolved-to-local-address")
    return "a server on this machine: run again with --local-servers (or --local-servers=" +
           std::to_string(example.port ? example.port : 3000) + ")";
  if (reason == "ip-literal-refused")
    return "name the host rather than its address, and allow the name with --allow";
  return {};
}

}  // namespace

std::string format_refused(const std::vector<run::RefusedRequest>& refused, std::string_view log_name) {
  if (refused.empty()) return {};
  std::map<std::string, std::vector<const run::RefusedRequest*>> by_reason;
  std::uint64_t total = 0;
  for (const auto& r : refused) {
    by_reason[r.reason].push_back(&r);
    total += r.count;
  }
  std::string out = "parallex: the proxy refused " + std::to_string(total) + " request" + (total == 1 ? "" : "s");
  if (!log_name.empty()) out += " (see " + std::string(log_name) + ")";
  out += ":\n";
  for (const auto& [reason, items] : by_reason) {
    out += "  " + reason + ":";
    for (const auto* r : items) {
      out += " " + (r->host.empty() ? std::string("(unreadable request)") : r->host);
      if (r->dns)
        out += " (DNS query)";
      else if (r->port)
        out += ":" + std::to_string(r->port);
      if (r->count > 1) out += " (x" + std::to_string(r->count) + ")";
    }
    out += "\n";
    if (const std::string fix = fix_for(reason, *items.front()); !fix.empty()) out += "    " + fix + "\n";
  }
  return out;
}

int run_command(run::RunInputs inputs, const RunHooks& hooks) {
  auto prepared = run::prepare_run(std::move(inputs));
  if (!prepared) {
    if (hooks.failed) hooks.failed(prepared.error());
    std::fprintf(stderr, "parallex: %s\n", redact(prepared.error().message).c_str());
    return run::kExitSetupFailed;
  }
  NoticePrinter printer(hooks);
  for (const auto& n : prepared.value().plan.notices) printer.print(n);
  if (hooks.prepared) hooks.prepared(prepared.value().plan);
  std::fflush(stdout);
  supervisor::RunObserver observer;
  observer.notice = [&printer](const run::Notice& n) { printer.print(n); };
  auto result = run::execute(std::move(prepared).value(), observer);
  if (!result) {
    if (hooks.failed) hooks.failed(result.error());
    std::fprintf(stderr, "parallex: %s\n", redact(result.error().message).c_str());
    return run::kExitSetupFailed;
  }
  const run::RunRecord& r = result.value().record;
  for (const auto& n : r.notices) printer.print(n);
  if (!r.setup_error.empty()) std::fprintf(stderr, "parallex: %s\n", r.setup_error.c_str());
  std::fputs(format_refused(r.refused, "the run's proxy.jsonl").c_str(), stderr);
  if (hooks.finished) hooks.finished(result.value());
  return result.value().exit_status();
}

}  // namespace px::cli
