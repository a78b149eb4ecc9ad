#include "supervisor/kill_switch.hpp"

#include <fcntl.h>

#include "common/unique_fd.hpp"
#include "killswitch/run_control.hpp"
#include "protect/sweep_after_death.hpp"

namespace px::supervisor {

KillSwitch::KillSwitch(const run::RunPlan& plan) : plan_(plan) {}
KillSwitch::~KillSwitch() = default;

Status KillSwitch::start(const std::string& run_id, Hooks hooks, run::RunRecord& record) {
  say_ = hooks.say;
  killswitch::RunHooks run_hooks;
  run_hooks.cut_network = std::move(hooks.cut_network);
  run_hooks.restore_network = std::move(hooks.restore_network);
  run_hooks.notice = [say = hooks.say](const std::string& message) {
    say({run::NoticeKind::kill_switch, message});
  };
  run_hooks.frozen = std::move(hooks.frozen);
  run_hooks.network = std::move(hooks.network);
  run_hooks.event = std::move(hooks.event);
  killswitch::RunControlOptions options;
  options.run_id = run_id;
  options.agent = plan_.agent;
  options.command = plan_.argv;
  options.folder = plan_.policy.run_folder();
  options.hooks = run_hooks;
  options.limits.pids_max = plan_.policy.process_limit().max;
  options.pids_v1 = plan_.seal != run::SealLevel::none;
  PX_TRY_ASSIGN(auto control, killswitch::RunControl::prepare(std::move(options)));
  // A supervisor killed with SIGKILL cannot remove the run's private dir:
  // its watchdog does, once the run is dead (run/private_dir.hpp).
  if (protect::sweep_available() && !plan_.dirs.private_dir.empty()) {
    UniqueFd base(::open(plan_.dirs.private_dir.parent_path().c_str(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (base) (void)control->hand_private_dirs(base.get());
  }
  std::lock_guard lock(mu_);
  control_ = std::move(control);
  record.notices.push_back({run::NoticeKind::kill_switch, control_->mechanism_note()});
  return ok();
}

Status KillSwitch::on_started(pid_t pid, bool enters_cgroup) {
  killswitch::RunControl* c = control();
  PX_TRY(c->arm());
  if (auto attached = c->attach(pid, enters_cgroup); !attached && say_)
    say_({run::NoticeKind::alert, "the kill switch does not track this run: " + attached.error().message});
  return ok();
}

void KillSwitch::stop(run::RunRecord& record) {
  killswitch::RunControl* c = control();
  if (!c) return;
  c->finish();
  record.kill_switch = run::KillSwitchRecord::from_json(c->record());
}

void KillSwitch::release() {
  if (killswitch::RunControl* c = control()) c->finish();
}

killswitch::RunControl* KillSwitch::control() const {
  std::lock_guard lock(mu_);
  return control_.get();
}

bool KillSwitch::was_killed() const {
  killswitch::RunControl* c = control();
  return c && c->was_killed();
}

}  // namespace px::supervisor
