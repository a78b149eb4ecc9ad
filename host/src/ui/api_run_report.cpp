// GET /api/runs/{id} and /api/runs/{id}/report: one run's record summary,
// and `parallex report --run ID --json` (report/report.hpp) with a timeline
// of its commands, file changes and events and the requests per host
// (docs/ui.md).
#include "agents/store.hpp"
#include "common/paths.hpp"
#include "killswitch/registry.hpp"
#include "report/report.hpp"
#include "report/run_events.hpp"
#include "report/timeline.hpp"
#include "run/network_decisions.hpp"
#include "run/record.hpp"
#include "run/runs_folders.hpp"
#include "run/status.hpp"
#include "ui/api.hpp"

namespace px::ui {
namespace {

// The record folder of run `id`, or an error saying there is none (and why the id is no id).
Result<report::RunSource> find_run_source(const std::string& id) {
  if (id.empty() || id.size() > 64 ||
      id.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz-") != std::string::npos)
    return Error::invalid(
        "\"" + id +
        "\" is not a run id (they look like 20261206-114000-ab12); GET /api/runs lists the runs.");
  auto sources =
      report::list_run_sources(run::every_runs_folder(), [&](const std::string& s) { return s != id; });
  if (sources.empty())
    return Error::not_found(
        "There is no run " + id +
        " in the runs folders (never recorded, or its record was removed); GET /api/runs lists the runs.");
  return sources.front();
}

ApiAnswer api_run(const ApiParams& p, const nlohmann::json&) {
  auto source = find_run_source(p.at("id"));
  if (!source) return api_error(source.error());
  auto record = run::read_record(source.value().dir);
  if (!record) return api_error(record.error());
  const auto& r = record.value();
  std::string state = r.ended_at ? "ended" : "running";
  bool paused = false;
  for (const auto& e : killswitch::list_runs(parallex_runtime_dir()).live)
    if (e.id == r.id) {
      state = e.state;
      paused = e.state == "paused";
    }
  // The record's own JSON of them (docs/reports.md), as the report reads it.
  const nlohmann::json whole = r.to_json_without_policy();
  const auto part = [&whole](const char* key) {
    return whole.contains(key) && !whole[key].is_null() ? whole[key] : nlohmann::json::array();
  };
  nlohmann::json questions = nlohmann::json::array();
  if (!r.ended_at)
    if (auto open = run::open_questions_json(r.id)) questions = open.value()["questions"];
  return {200,
          {{"id", r.id},
           {"agent", r.agent.empty() ? nlohmann::json() : nlohmann::json(r.agent)},
           {"command", r.argv},
           {"folder", r.run_folder.string()},
           {"state", state},
           {"status", run::to_string(r.status)},
           {"paused", paused},
           {"started", r.started_at},
           {"ended", r.ended_at ? nlohmann::json(*r.ended_at) : nlohmann::json()},
           {"exit", r.exit_status ? nlohmann::json(*r.exit_status) : nlohmann::json()},
           {"network", r.network},
           {"refused", part("refused")},
           {"moved_aside", part("quarantined")},
           {"decoys_touched", part("decoy_hits")},
           {"questions", questions},
           {"open_requests", whole.contains("open_requests") && whole["open_requests"].is_object()
                                 ? whole["open_requests"].value("requests", nlohmann::json::array())
                                 : nlohmann::json::array()}}};
}

ApiAnswer api_run_report(const ApiParams& p, const nlohmann::json&) {
  auto found = find_run_source(p.at("id"));
  if (!found) return api_error(found.error());
  const auto& source = found.value();
  report::ReportRequest req;
  if (!source.agent.empty())
    req = report::agent_request(source.agent,
                                agents::paths_of(agents::default_agents_root(), source.agent).root);
  req.runs_dir = source.dir.parent_path();
  req.older_runs_dirs.clear();
  req.selection.run_id = source.id;
  const auto plugins = pluginhost::PluginSet::load_default();
  req.plugins = &plugins;
  const report::Json built = report::build_report(req);
  // The run's commands, file changes and events on one time axis, and its
  // requests counted per host (report/timeline.hpp).
  report::Timeline timeline;
  if (const auto runs = built.find("runs"); runs != built.end() && runs->is_array() && !runs->empty())
    timeline = report::run_timeline(runs->front(), report::read_run_events(source));
  nlohmann::json rep = built;
  rep["timeline"] = timeline.items;
  rep["hosts"] = timeline.hosts;
  return {200, rep};
}

}  // namespace

std::vector<ApiRoute> api_run_report_routes() {
  return {{"GET", "/api/runs/{id}", api_run}, {"GET", "/api/runs/{id}/report", api_run_report}};
}

}  // namespace px::ui
