#include "run/runs_listing.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "common/paths.hpp"
#include "common/shown.hpp"
#include "killswitch/cgroup.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/direct_control.hpp"
#include "killswitch/registry.hpp"
#include "protect/unswept.hpp"
#include "run/private_dir.hpp"
#include "run/record.hpp"
#include "run/runs_folders.hpp"
#include "run/status.hpp"

namespace px::run {
namespace {

namespace fs = std::filesystem;

// Records left without an end by a supervisor that is gone (SIGKILL, a
// crash): closed now, so that no report counts anything later as theirs.
// With them, what the run's watchdog moved aside after the supervisor died
// (protect/sweep_after_death.hpp).
struct ListingClosedRun {
  std::string id;
  std::vector<Quarantined> moved;
  std::vector<AskedQuestion> lost;  // ask mode's questions open when it died
};

// `damaged`: a sentence for each record that cannot be read (named, left as it is).
std::vector<ListingClosedRun> listing_close_lost_runs(std::vector<std::string>& damaged) {
  std::vector<ListingClosedRun> closed;
  for (const auto& [dir, agent] : every_runs_folder()) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_directory(ec) || it->is_symlink(ec) || record_ended(it->path())) continue;
      auto record = read_record(it->path());
      if (!record && record.error().kind != ErrorKind::not_found)
        damaged.push_back(record.error().message + "; it is skipped (nothing was changed)");
      if (!record || record.value().ended_at) continue;
      if (!close_if_lost(it->path(), record.value())) continue;
      ListingClosedRun c{record.value().id, {}, {}};
      for (const auto& q : record.value().quarantined)
        if (q.when == "after its supervisor died") c.moved.push_back(q);
      if (const auto& live = record.value().network_live)
        for (const auto& q : live->questions)
          if (q.outcome == "lost") c.lost.push_back(q);
      closed.push_back(std::move(c));
    }
  }
  return closed;
}

}  // namespace

RunsListing list_live_runs() {
  // Runs whose supervisor and watchdog both died are swept first
  // (protect/unswept.hpp), so what is moved is in their records below.
  RunsListing out;
  for (const auto& line : protect::sweep_unswept_runs()) out.said.push_back(line);
  sweep_private_dirs();  // of runs whose supervisor and watchdog both died (run/private_dir.hpp)
  std::vector<std::string> damaged;
  const auto closed = listing_close_lost_runs(damaged);
  for (const auto& d : damaged) out.said.push_back(d);
  nlohmann::json closed_ids = nlohmann::json::array(), moved = nlohmann::json::array(),
                 lost = nlohmann::json::array();
  for (const auto& c : closed) {
    out.said.push_back(
        "run " + c.id +
        " was left without an end by its supervisor; closed it as lost (its end is taken as the last "
        "trace it left)");
    closed_ids.push_back(c.id);
    for (const auto& q : c.lost) {
      out.said.push_back("run " + c.id + ": question " + std::to_string(q.question) + " (" + shown(q.host) +
                         ":" + std::to_string(q.port) +
                         ") was open when its supervisor died; nobody answered it and its connections were "
                         "closed (run.json says \"lost\")");
      lost.push_back({{"run", c.id}, {"question", q.question}, {"host", q.host}, {"port", q.port}});
    }
    for (const auto& q : c.moved) {
      out.said.push_back("run " + c.id + ": its watchdog moved aside " + q.path.string() + " (" + q.why +
                         ") into " + q.moved_to.string());
      moved.push_back({{"run", c.id}, {"path", q.path.string()}, {"moved_to", q.moved_to.string()}});
    }
  }
  const auto listed = killswitch::list_runs(parallex_runtime_dir());
  std::vector<nlohmann::json> rows(listed.live.size());
  std::vector<std::thread> asking;
  for (std::size_t i = 0; i < listed.live.size(); ++i) {
    const auto& e = listed.live[i];
    nlohmann::json& row = rows[i];
    row = killswitch::to_json(e);
    for (const char* internal : {"v", "pid_start", "child_start", "watchdog_pid"}) row.erase(internal);
    // CPU and memory from the run's cgroup where it has one (null: not known).
    const auto usage = e.cgroup.empty() ? killswitch::CgroupUsage{} : killswitch::read_cgroup_usage(e.cgroup);
    row["cpu_seconds"] = usage.cpu_seconds ? nlohmann::json(*usage.cpu_seconds) : nlohmann::json();
    row["memory_bytes"] = usage.memory_bytes ? nlohmann::json(*usage.memory_bytes) : nlohmann::json();
    // A supervisor that does not answer (stopped, hung) is said as such, with
    // the state a `pause`/`kill` done without it left the run in.
    const auto not_answering = [&row, &e](const std::string& why) {
      row["supervisor"] = why;
      row["state"] = killswitch::pending_direct_state(e.socket.parent_path(), e.id).value_or(e.state);
    };
    if (const auto why = killswitch::supervisor_cannot_answer(e)) {
      not_answering(*why);
      continue;
    }
    // The supervisor's own view (state, process count) when it answers; all
    // asked at once, so one that hangs costs the listing one time-out.
    asking.emplace_back([&row, &e, not_answering] {
      auto reply =
          killswitch::send_request(e.socket, {{"v", killswitch::kControlProtocolVersion}, {"op", "status"}});
      if (reply && reply.value().value("ok", false) && reply.value().contains("run")) {
        const auto& run = reply.value()["run"];
        row["state"] = run.value("state", e.state);
        row["processes"] = run.value("processes", 0);
      } else if (!reply && reply.error().kind == ErrorKind::conflict) {
        not_answering("did not answer within " + std::to_string(killswitch::kAnswerWithin.count()) + " ms");
      }
    });
  }
  for (auto& t : asking) t.join();
  out.json =
      nlohmann::json{{"runs", rows},           {"cleaned_stale", listed.cleaned}, {"closed_lost", closed_ids},
                     {"lost_questions", lost}, {"damaged_records", damaged},      {"moved_aside", moved}};
  return out;
}

nlohmann::json recent_ended_runs(std::size_t limit) {
  std::vector<std::pair<std::string, nlohmann::json>> ended;
  for (const auto& folder : every_runs_folder()) {
    std::error_code ec;
    for (fs::directory_iterator it(folder.dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_directory(ec) || it->is_symlink(ec) || !record_ended(it->path())) continue;
      auto record = read_record(it->path());
      if (!record || !record.value().ended_at) continue;
      const auto& r = record.value();
      nlohmann::json row{{"id", r.id},
                         {"agent", r.agent.empty() ? nlohmann::json() : nlohmann::json(r.agent)},
                         {"command", r.argv},
                         {"folder", r.run_folder.string()},
                         {"state", "ended"},
                         {"status", to_string(r.status)},
                         {"started", r.started_at},
                         {"ended", *r.ended_at},
                         {"exit", r.exit_status ? nlohmann::json(*r.exit_status) : nlohmann::json()}};
      ended.emplace_back(*r.ended_at, std::move(row));
    }
  }
  std::sort(ended.begin(), ended.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < ended.size() && i < limit; ++i) rows.push_back(std::move(ended[i].second));
  return rows;
}

}  // namespace px::run
