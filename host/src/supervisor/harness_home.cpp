#include "supervisor/harness_home.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/paths.hpp"
#include "common/redact.hpp"
#include "killswitch/run_control.hpp"
#include "protect/home_settings.hpp"

namespace px::supervisor {

namespace fs = std::filesystem;

Status make_state_dirs(const policy::Policy& p) {
  const bool own_home = p.run_home() != p.user_home();
  std::error_code ec;
  for (const auto& g : p.grants()) {
    if (!g.create_if_missing || !own_home || !is_within(g.path, p.run_home()) || fs::exists(g.path, ec))
      continue;
    if (g.state_file) {
      // An empty file of the harness's, 0600 (the folders above it as create_directories makes them).
      fs::create_directories(g.path.parent_path(), ec);
      const int fd =
          ec ? -1 : ::open(g.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return Error::io(
            "create the harness state file " + g.path.string() + " (" + g.origin.describe() + ")",
            ec ? ec.value() : errno);
      ::close(fd);
      continue;
    }
    fs::create_directories(g.path, ec);
    if (ec)
      return Error::io("create the harness state dir " + g.path.string() + " (" + g.origin.describe() + ")",
                       ec.value());
    ::chmod(g.path.c_str(), 0700);
  }
  return ok();
}

HarnessHome::HarnessHome(const run::RunPlan& plan) : plan_(plan) {}
HarnessHome::~HarnessHome() = default;

void HarnessHome::start(const fs::path& record_dir, run::RunRecord& record) {
  if (plan_.seal == run::SealLevel::none || plan_.command_problem) return;
  std::vector<run::Notice> notes;
  home_ = protect::HomeSettings::prepare(plan_.policy, plan_.dirs.private_dir, record_dir, notes);
  for (auto& n : notes) record.notices.push_back({n.kind, redact(n.text)});
}

void HarnessHome::add_to(backend::LaunchRequest& request) const {
  if (!home_) return;
  request.home_layers = home_->layers();
  request.home_held_dir = home_->held_dir();
}

void HarnessHome::on_started(killswitch::RunControl& control) {
  if (!home_) return;
  home_->start_watch();
  if (home_->watch_descriptor() >= 0) (void)control.hold_until_exit(home_->watch_descriptor());
}

void HarnessHome::stop(run::RunRecord& record) {
  if (!home_) return;
  auto settled = home_->settle();
  for (auto& n : settled.notices) record.notices.push_back({n.kind, redact(n.text)});
  record.home_changes.insert(record.home_changes.end(), settled.held.begin(), settled.held.end());
  if (!settled.held.empty())
    record.notices.push_back({run::NoticeKind::alert,
                              "the run changed " + std::to_string(settled.held.size()) +
                                  " of the harness's "
                                  "command-running settings in your home; they are held back, not applied. "
                                  "Review and apply them with: parallex runs apply " +
                                  record.id});
}

}  // namespace px::supervisor
