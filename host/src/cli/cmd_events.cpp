// `parallex events [--follow] [--run ID] [--agent NAME] [--json] [--since TIME]`:
// every decision taken about the user's runs (docs/events.md), from their
// record folders: what is recorded, or with --follow what comes as the runs go
// (new runs appear as they start). One JSON line an event with --json, a
// one-line text form without. Only files are read, so a reader that is slow,
// stopped or gone never holds up a run.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "agents/names.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/json_io.hpp"
#include "common/shown.hpp"
#include "report/events_follow.hpp"
#include "report/run_events.hpp"
#include "report/time_text.hpp"
#include "run/events.hpp"
#include "run/record.hpp"
#include "run/runs_folders.hpp"

namespace px::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct EventsOptions {
  bool follow = false;
  std::string run_id;
  std::string agent;
  bool json = false;
  std::string since;
  int poll_ms = 100;
};

std::string events_field(const ojson& e, const char* key) {
  const auto it = e.find(key);
  if (it == e.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// What follows the type in the text form: the event's gist.
std::string events_gist(const ojson& e) {
  const std::string type = events_field(e, "type");
  auto f = [&e](const char* k) { return events_field(e, k); };
  auto host_port = [&] { return f("host") + (f("port").empty() ? "" : ":" + f("port")); };
  std::string s;
  if (type == run::event::run_start) {
    s = f("command") + " (seal " + f("seal") + ", network " + f("network") + ", in " + f("folder") + ")";
  } else if (type == run::event::run_end) {
    s = f("status");
    if (!f("exit_status").empty()) s += ", exit " + f("exit_status");
    if (!f("error").empty()) s += ": " + f("error");
  } else if (type.rfind("network.", 0) == 0 || type == run::event::exfiltration_refused) {
    s = (f("method").empty() ? "" : f("method") + " ") + host_port();
    if (!f("reason").empty()) s += " " + f("reason");
    if (!f("question").empty()) s += " (question " + f("question") + ": " + f("answer") + ")";
    if (!f("process").empty()) s += " by " + f("process");
    if (!f("rule").empty()) s += " " + f("rule");
  } else if (type.rfind("request.", 0) == 0 || type == run::event::credential_swapped) {
    s = f("method") + " " + host_port() + f("path") + " " + f("reason");
    if (!f("credentials").empty()) s += " (credentials " + f("credentials") + ")";
  } else if (type == run::event::rule_changed) {
    s = f("change") + " " + f("rule") + (f("by").empty() ? "" : " by " + f("by"));
  } else if (type == run::event::seal_refused) {
    s = f("source") + ": " + f("call") + " by " + f("process") + " (" + f("count") + "x)";
  } else if (type == run::event::file_moved_aside) {
    s = f("path") + " (" + f("why") + ")" +
        (f("moved_to").empty() ? ": " + f("error") : " -> " + f("moved_to"));
  } else if (type == run::event::decoy_touched) {
    s = f("access") + " " + f("path") + (f("process").empty() ? "" : " by " + f("process"));
  } else if (type == run::event::open_requested) {
    // The whole address (escaped with the line), and whether it leaves the rule.
    s = f("url") + (f("in_rule") == "false" ? " (outside the run's network rule)" : "") + " not opened" +
        (f("process").empty() ? "" : ", asked by " + f("process"));
  } else if (type.rfind("killswitch.", 0) == 0) {
    s = f("by").empty() ? f("leftovers_killed") + " left over" : "by " + f("by");
  }
  return s;
}

void events_print(const std::vector<ojson>& batch, bool json) {
  for (const auto& e : batch) {
    if (json) {
      std::fputs((to_json_text(e) + "\n").c_str(), stdout);
      continue;
    }
    std::string line = events_field(e, "time") + " " + events_field(e, "run");
    if (!events_field(e, "agent").empty()) line += " " + events_field(e, "agent");
    line += " " + events_field(e, "type");
    const std::string gist = events_gist(e);
    if (!gist.empty()) line += " " + gist;
    std::fputs((shown(line) + "\n").c_str(), stdout);
  }
  std::fflush(stdout);
}

struct EventsFilter {
  std::vector<report::RunsFolder> folders;  // where to look (re-listed while following without --agent)
  std::optional<std::int64_t> since_ms;
};

int events_follow(const EventsOptions& o, const EventsFilter& filter) {
  // With an agent named, its folders only; else every runs folder, listed
  // again each time (an agent made meanwhile).
  report::EventsFollower follower(
      [&o, &filter, first = true]() mutable {
        const bool keep = !o.agent.empty() || first;
        first = false;
        return keep ? filter.folders : run::every_runs_folder();
      },
      o.run_id, filter.since_ms);
  for (;;) {
    const auto batch = follower.poll();
    if (!batch.empty()) events_print(batch, o.json);
    if (follower.done()) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
  }
}

int events_run(const EventsOptions& o) {
  EventsFilter filter;
  if (!o.since.empty()) {
    auto since = report::parse_since(o.since, report::now_ms());
    if (!since) return report_error(since.error());
    filter.since_ms = since.value();
  }
  if (!o.run_id.empty() &&
      (o.run_id.size() > 64 ||
       o.run_id.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz-") != std::string::npos))
    return report_error(Error::invalid("\"" + o.run_id +
                                       "\" is not a run id (they look like 20261206-114000-ab12); "
                                       "`parallex events` lists the runs' events with their ids."));
  filter.folders = run::every_runs_folder();
  if (!o.agent.empty()) {
    if (auto named = agents::check_name(o.agent); !named) return report_error(named.error());
    std::vector<report::RunsFolder> theirs;
    for (auto& f : filter.folders)
      if (f.agent == o.agent) theirs.push_back(std::move(f));
    if (theirs.empty())
      return report_error(Error::not_found("There is no agent named " + o.agent +
                                           "; `parallex agent list` shows the agents."));
    filter.folders = std::move(theirs);
  }
  const auto sources = report::list_run_sources(
      filter.folders, [&](const std::string& id) { return !o.run_id.empty() && id != o.run_id; });
  if (!o.run_id.empty() && sources.empty())
    return report_error(Error::not_found("There is no run " + o.run_id +
                                         (o.agent.empty() ? std::string() : " of agent " + o.agent) +
                                         " in the runs folders; `parallex events` lists the runs' events."));
  if (o.follow) return events_follow(o, filter);
  std::vector<std::vector<ojson>> all;
  for (const auto& s : sources)
    all.push_back(report::events_since(report::read_run_events(s), filter.since_ms));
  events_print(report::merge_by_time(std::move(all)), o.json);
  return 0;
}

Action setup_events(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<EventsOptions>();
  app.add_flag("--follow,-f", o->follow,
               "Keep printing events as the runs go; new runs appear as they start");
  app.add_option("--run", o->run_id, "Only this run's events (its id)");
  app.add_option("--agent", o->agent, "Only the events of this agent's runs");
  app.add_flag("--json", o->json, "One JSON object a line, in the versioned schema of docs/events.md");
  app.add_option("--since", o->since,
                 "Only events at or after this time (ISO 8601) or age (90s, 30m, 2h, 3d)");
  app.add_option("--poll-ms", o->poll_ms,
                 "With --follow: how often the runs' files are read, in milliseconds")
      ->check(CLI::Range(10, 10000))
      ->group("");
  return [o] { return events_run(*o); };
}

}  // namespace

PARALLEX_COMMAND("events", "Every decision about your runs, as it happens (--follow), one line each", 23,
                 setup_events);

}  // namespace px::cli
