#include "report/run_records.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "run/record.hpp"

namespace px::report {

namespace fs = std::filesystem;

namespace {

struct Keyed {
  std::string started;  // the record's start, to the millisecond
  RunRef ref;
};

// The record folders of one runs folder, read; damaged records said.
Status read_folder(const fs::path& runs_dir, std::vector<Keyed>& out, std::set<std::string>& seen,
                   std::vector<std::string>& damaged) {
  std::error_code ec;
  const auto st = fs::status(runs_dir, ec);
  if (ec || !fs::exists(st))
    return Error::not_found("There are no run records in " + runs_dir.string() +
                            " (the folder does not exist): no run has been recorded there yet.");
  if (!fs::is_directory(st))
    return Error::invalid(
        runs_dir.string() +
        " is a file, not a folder of run records: give the folder that holds RUN-ID/run.json.");
  fs::directory_iterator it(runs_dir, ec), end;
  if (ec) return Error::io("list the run records in " + runs_dir.string(), ec.value());
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    // A record folder is a folder, not a link to one somewhere else.
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const std::string id = it->path().filename().string();
    if (id.empty() || id.front() == '.' || seen.count(id)) continue;
    auto record = run::read_record(it->path());
    if (!record) {
      // A folder with nothing of a record in it is not a run (and not said).
      if (record.error().kind == ErrorKind::not_found && !fs::exists(it->path() / "proxy.jsonl", ec))
        continue;
      damaged.push_back(record.error().message + "; it is skipped (nothing was changed)");
      continue;
    }
    seen.insert(id);
    out.push_back({record.value().started_at, RunRef{id, runs_dir}});
  }
  return ok();
}

}  // namespace

Result<RunListing> list_runs(const fs::path& runs_dir, const std::vector<fs::path>& older_dirs) {
  RunListing listing;
  std::vector<Keyed> keyed;
  std::set<std::string> seen;
  const Status main = read_folder(runs_dir, keyed, seen, listing.damaged);
  if (!main && main.error().kind != ErrorKind::not_found) return main.error();
  for (const auto& older : older_dirs)
    if (older != runs_dir) (void)read_folder(older, keyed, seen, listing.damaged);
  if (!main && keyed.empty() && listing.damaged.empty()) return main.error();
  // Run ids sort by the second only (two runs in one second share a prefix):
  // by the start time in the record, to the millisecond, then by id.
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return a.started != b.started ? a.started < b.started : a.ref.id < b.ref.id;
  });
  for (auto& k : keyed) listing.runs.push_back(std::move(k.ref));
  return listing;
}

}  // namespace px::report
