// GET /api/runs, POST /api/pause-all, /api/resume-all and
// /api/runs/{id}/pause|resume|kill: `parallex runs --json`, `pause`,
// `resume` and `kill` (run/runs_listing.hpp, killswitch/kill_switch_client.hpp).
#include "common/paths.hpp"
#include "killswitch/kill_switch_client.hpp"
#include "run/runs_listing.hpp"
#include "ui/api.hpp"

namespace px::ui {
namespace {

// Ended runs shown beside the live ones.
constexpr std::size_t kRecentRuns = 20;

ApiAnswer api_list_runs(const ApiParams&, const nlohmann::json&) {
  auto listing = run::list_live_runs();
  nlohmann::json rows = nlohmann::json::array();
  for (auto row : listing.json["runs"]) {
    // The contract's names beside `runs --json`'s own (docs/ui.md).
    const std::string agent = row.value("agent", "");
    row["agent"] = agent.empty() ? nlohmann::json() : nlohmann::json(agent);
    row["started"] = row.value("since", "");
    row["ended"] = nullptr;
    row["exit"] = nullptr;
    row["paused"] = row.value("state", "") == "paused";
    rows.push_back(std::move(row));
  }
  for (auto& row : run::recent_ended_runs(kRecentRuns)) {
    row["paused"] = false;
    rows.push_back(std::move(row));
  }
  return {200, rows};
}

ApiAnswer api_kill_switch(const std::string& op, const killswitch::RunSelection& selection) {
  auto done = killswitch::kill_switch_act(parallex_runtime_dir(), op, selection);
  if (!done) return api_error(done.error());
  nlohmann::json body = done.value().json;
  body["ok"] = done.value().all_ok;
  return {200, body};
}

ApiAnswer api_run_op(const std::string& op, const ApiParams& params) {
  const std::string& id = params.at("id");
  auto done = killswitch::kill_switch_act(parallex_runtime_dir(), op, {false, id});
  if (!done) return run_gone_or(done.error(), id, op);
  nlohmann::json body = done.value().json;
  body["ok"] = done.value().all_ok;
  return {200, body};
}

}  // namespace

ApiAnswer run_gone_or(const Error& error, const std::string& id, const std::string& what) {
  // A run that is not live but was: 410, saying how it ended.
  if (error.kind == ErrorKind::not_found || error.kind == ErrorKind::invalid_input)
    for (const auto& row : run::recent_ended_runs(1000))
      if (row.value("id", "") == id)
        return {410,
                {{"error", "run " + id + " ended at " + row.value("ended", "") + " (" +
                               row.value("status", "") + "): there is nothing to " + what}}};
  return api_error(error);
}

std::vector<ApiRoute> api_runs_routes() {
  return {
      {"GET", "/api/runs", api_list_runs},
      {"POST", "/api/pause-all",
       [](const ApiParams&, const nlohmann::json&) {
         return api_kill_switch("pause", {true, ""});
       }},
      {"POST", "/api/resume-all",
       [](const ApiParams&, const nlohmann::json&) {
         return api_kill_switch("resume", {true, ""});
       }},
      {"POST", "/api/runs/{id}/pause",
       [](const ApiParams& p, const nlohmann::json&) { return api_run_op("pause", p); }},
      {"POST", "/api/runs/{id}/resume",
       [](const ApiParams& p, const nlohmann::json&) { return api_run_op("resume", p); }},
      {"POST", "/api/runs/{id}/kill",
       [](const ApiParams& p, const nlohmann::json&) { return api_run_op("kill", p); }},
  };
}

std::vector<ApiRoute> api_routes() {
  std::vector<ApiRoute> all;
  for (auto* area : {api_runs_routes, api_decisions_routes, api_agents_routes, api_run_report_routes})
    for (auto&& r : area()) all.push_back(std::move(r));
  return all;
}

}  // namespace px::ui
