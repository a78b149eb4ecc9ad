// `parallex runs [--json]`: the live runs of this user (id, agent, command,
// pid, state, since), from the registry; entries of dead supervisors are
// cleaned up on the way, and so are the records they left without an end
// (closed as lost, their end marked unknown).
#include <cstdio>
#include <filesystem>

#include "agents/store.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "run/record.hpp"
#include "run/stage.hpp"
#include "supervisor/control_socket.hpp"
#include "supervisor/registry.hpp"
#include "supervisor/unswept.hpp"

namespace px::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  bool json = false;
};

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Every runs folder of this user: the ad-hoc runs' and each agent's, and
// where an older Parallex kept them (under the data folder).
std::vector<fs::path> runs_dirs() {
  std::vector<fs::path> dirs{run::adhoc_runs_dir(), parallex_data_dir() / "runs"};
  const fs::path agents_root = agents::default_agents_root();
  if (auto names = agents::list_agents(agents_root))
    for (const auto& name : names.value()) {
      dirs.push_back(agents::paths_of(agents_root, name).runs());
      dirs.push_back(agents::paths_of(agents_root, name).older_runs());
    }
  return dirs;
}

// Records left without an end by a supervisor that is gone (SIGKILL, a
// crash): closed now, so that no report counts anything later as theirs.
// With them, what the run's watchdog moved aside after the supervisor died
// (supervisor/sweep_after_death.hpp).
struct ClosedRun {
  std::string id;
  nlohmann::json moved = nlohmann::json::array();
};

std::vector<ClosedRun> close_lost_runs() {
  std::vector<ClosedRun> closed;
  for (const auto& dir : runs_dirs()) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_directory(ec) || run::record_ended(it->path())) continue;
      auto record = run::read_record(it->path());
      if (!record || record.value().ended_at) continue;
      if (!run::close_if_lost(it->path(), record.value())) continue;
      ClosedRun c{record.value().id};
      for (const auto& q : record.value().quarantined)
        if (q.value("when", "") == "after its supervisor died") c.moved.push_back(q);
      closed.push_back(std::move(c));
    }
  }
  return closed;
}

int run(const Options& o) {
  // Runs whose supervisor and watchdog both died are swept first
  // (supervisor/unswept.hpp), so what is moved is in their records below.
  for (const auto& line : supervisor::sweep_unswept_runs())
    std::fprintf(stderr, "parallex: %s\n", line.c_str());
  const auto closed = close_lost_runs();
  nlohmann::json closed_ids = nlohmann::json::array(), moved = nlohmann::json::array();
  for (const auto& c : closed) {
    std::fprintf(stderr,
                 "parallex: run %s was left without an end by its supervisor; closed it as lost (its end is "
                 "taken as the last trace it left)\n",
                 c.id.c_str());
    closed_ids.push_back(c.id);
    for (const auto& q : c.moved) {
      std::fprintf(stderr, "parallex: run %s: its watchdog moved aside %s (%s) into %s\n", c.id.c_str(),
                   q.value("path", "").c_str(), q.value("why", "").c_str(), q.value("moved_to", "").c_str());
      moved.push_back({{"run", c.id}, {"path", q.value("path", "")}, {"moved_to", q.value("moved_to", "")}});
    }
  }
  const auto listed = supervisor::list_runs(parallex_runtime_dir());
  std::vector<nlohmann::json> rows;
  for (const auto& e : listed.live) {
    nlohmann::json row = supervisor::to_json(e);
    row.erase("v");
    row.erase("pid_start");
    // The supervisor's own view (state, process count) when it answers.
    auto reply = supervisor::send_request(
        e.socket, {{"v", supervisor::kControlProtocolVersion}, {"op", "status"}}, std::chrono::seconds(2));
    if (reply && reply.value().value("ok", false) && reply.value().contains("run")) {
      const auto& run = reply.value()["run"];
      row["state"] = run.value("state", e.state);
      row["processes"] = run.value("processes", 0);
    }
    rows.push_back(std::move(row));
  }
  if (o.json) {
    print_json(nlohmann::json{{"runs", rows},
                              {"cleaned_stale", listed.cleaned},
                              {"closed_lost", closed_ids},
                              {"moved_aside", moved}});
    return 0;
  }
  if (rows.empty()) {
    std::printf("no run is going\n");
    return 0;
  }
  std::printf("%-26s %-14s %-8s %-9s %-6s %-20s %s\n", "ID", "AGENT", "PID", "STATE", "PROCS", "SINCE",
              "COMMAND");
  for (const auto& r : rows) {
    const std::string agent = r.value("agent", "");
    std::printf("%-26s %-14s %-8d %-9s %-6s %-20s %s\n", r.value("id", "").c_str(),
                agent.empty() ? "-" : agent.c_str(), r.value("pid", 0), r.value("state", "").c_str(),
                r.contains("processes") ? std::to_string(r["processes"].get<int>()).c_str() : "?",
                r.value("since", "").c_str(),
                redact(join_command(r.value("command", std::vector<std::string>{}))).c_str());
  }
  return 0;
}

Action setup(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<Options>();
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return run(*o); };
}

}  // namespace

PARALLEX_COMMAND("runs", "List the runs going now (id, agent, command, pid, state, since)", 30, setup);

}  // namespace px::cli
