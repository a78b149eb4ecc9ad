#include "report/run_records.hpp"

#include <algorithm>

namespace px::report {

namespace fs = std::filesystem;

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
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace px::report
