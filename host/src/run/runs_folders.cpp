#include "run/runs_folders.hpp"

#include <algorithm>

#include "agents/store.hpp"
#include "common/paths.hpp"
#include "run/stage.hpp"

namespace px::run {

std::vector<report::RunsFolder> every_runs_folder() {
  std::vector<report::RunsFolder> folders{{run::adhoc_runs_dir(), ""}, {parallex_data_dir() / "runs", ""}};
  const fs::path agents_root = agents::default_agents_root();
  if (auto names = agents::list_agents(agents_root))
    for (const auto& name : names.value()) {
      folders.push_back({agents::paths_of(agents_root, name).runs(), name});
      folders.push_back({agents::paths_of(agents_root, name).older_runs(), name});
    }
  std::vector<report::RunsFolder> unique;
  for (auto& f : folders) {
    f.dir = normal_absolute(f.dir);
    if (std::none_of(unique.begin(), unique.end(), [&](const auto& u) { return u.dir == f.dir; }))
      unique.push_back(std::move(f));
  }
  return unique;
}

}  // namespace px::run
