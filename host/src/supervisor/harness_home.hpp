#pragma once
// The harness's files in a home, as one service of the run (the work is
// protect/home_settings.hpp's):
//   make_state_dirs()  before the seal, in an agent's own home: the harness's
//                      state folders and files made so the grants cover them;
//   start()            before the seal is planned: the run's own copies and
//                      layers of the guarded files in the user's own home;
//   on_started()       once the command's first process exists: what appears
//                      at a guarded path is moved aside at once;
//   stop()             once nothing of the run runs: the harness's data lands
//                      in the home, a changed setting is held back in the
//                      record (`home_changes`) with the command that applies it.
// Unsealed runs do what the user chose: nothing is layered or held.
#include <filesystem>
#include <functional>
#include <memory>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "run/notice.hpp"
#include "run/plan.hpp"
#include "run/record.hpp"

namespace px::killswitch {
class RunControl;
}
namespace px::protect {
class HomeSettings;
}

namespace px::supervisor {

// Harness state dirs and files missing from an agent's own home (Parallex's
// state) are made so the grant can cover them. In the user's own home nothing
// is made: the seal shows them empty and keeps what the run wrote.
Status make_state_dirs(const policy::Policy& policy);

class HarnessHome {
 public:
  using Say = std::function<void(const run::Notice&)>;
  explicit HarnessHome(const run::RunPlan& plan);
  ~HarnessHome();
  HarnessHome(const HarnessHome&) = delete;
  HarnessHome& operator=(const HarnessHome&) = delete;

  // `record_dir`: where held changes go at the end.
  void start(const std::filesystem::path& record_dir, run::RunRecord& record);
  // Whether start() made layers (stop() has something to settle).
  bool active() const { return home_ != nullptr; }
  // The layers and the held folder, for the seal's view.
  void add_to(backend::LaunchRequest& request) const;
  // `control` holds the watch's descriptor past the run's exit status (its
  // last close waits for the kernel).
  void on_started(killswitch::RunControl& control);
  void stop(run::RunRecord& record);

 private:
  const run::RunPlan& plan_;
  std::unique_ptr<protect::HomeSettings> home_;
};

}  // namespace px::supervisor
