#include "report/run_records.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace px::report {

namespace fs = std::filesystem;

namespace {

// The record's start time to the millisecond, else the id's own time in the same spelling.
std::string start_key(const fs::path& run_dir, const std::string& id) {
  std::string started;
  std::ifstream in(run_dir / "run.json");
  const auto record = nlohmann::json::parse(in, nullptr, false);
  if (record.is_object() && record.contains("started_at") && record["started_at"].is_string())
    started = record["started_at"].get<std::string>();
  // 20261129-190433-4f2a -> 2026-11-29T19:04:33.000Z.
  if (started.empty() && id.size() >= 15 && id[8] == '-')
    started = id.substr(0, 4) + "-" + id.substr(4, 2) + "-" + id.substr(6, 2) + "T" + id.substr(9, 2) + ":" +
              id.substr(11, 2) + ":" + id.substr(13, 2) + ".000Z";
  return started;
}

}  // namespace

Result<std::vector<RunRef>> list_runs(const fs::path& runs_dir, const std::vector<fs::path>& older_dirs) {
  auto main = list_run_ids(runs_dir);
  std::vector<std::pair<std::string, RunRef>> keyed;
  std::set<std::string> seen;
  if (main)
    for (auto& id : main.value()) {
      seen.insert(id);
      keyed.push_back({start_key(runs_dir / id, id), RunRef{id, runs_dir}});
    }
  for (const auto& older : older_dirs) {
    if (older == runs_dir) continue;
    auto ids = list_run_ids(older);
    if (!ids) continue;
    for (auto& id : ids.value())
      if (seen.insert(id).second) keyed.push_back({start_key(older / id, id), RunRef{id, older}});
  }
  if (!main && keyed.empty()) return std::move(main).error();
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.id < b.second.id;
  });
  std::vector<RunRef> out;
  for (auto& [key, ref] : keyed) out.push_back(std::move(ref));
  return out;
}

Result<std::vector<std::string>> list_run_ids(const fs::path& runs_dir) {
  std::error_code ec;
  if (!fs::is_directory(runs_dir, ec))
    return Error::not_found("There are no run records in " + runs_dir.string() +
                            " (the folder does not exist): no run has been recorded there yet.");
  std::vector<std::string> ids;
  fs::directory_iterator it(runs_dir, ec), end;
  if (ec) return Error::io("list the run records in " + runs_dir.string(), ec.value());
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::path dir = it->path();
    if (!it->is_directory(ec)) continue;
    if (fs::exists(dir / "run.json", ec) || fs::exists(dir / "proxy.jsonl", ec))
      ids.push_back(dir.filename().string());
  }
  // Run ids sort by the second only (two runs in one second share a prefix):
  // order by the start time in the record, to the millisecond, then by id.
  std::vector<std::pair<std::string, std::string>> keyed;
  keyed.reserve(ids.size());
  for (auto& id : ids) {
    std::string started = start_key(runs_dir / id, id);
    keyed.emplace_back(std::move(started), std::move(id));
  }
  std::sort(keyed.begin(), keyed.end());
  ids.clear();
  for (auto& [key, id] : keyed) ids.push_back(std::move(id));
  return ids;
}

}  // namespace px::report
