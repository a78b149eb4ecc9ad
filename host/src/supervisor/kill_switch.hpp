#pragma once
// The kill switch as one service of the run (killswitch/run_control.hpp does
// the work): its cgroup, which the seal is born into, made before the seal;
// its socket, registry entry and watchdog once the command's first process
// exists; at the end, the run's leftovers killed and its part of the record.
//   start()        before the seal: the cgroup, the watchdog's hold on the
//                  run's private dirs, the mechanism said in the record;
//   on_started()   the socket and registry entry, the first process attached;
//   stop()         whatever is left of the run killed, `kill_switch` into the
//                  record; release() the same without the record (a run that
//                  failed before its command ran).
#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"
#include "run/notice.hpp"
#include "run/plan.hpp"
#include "run/record.hpp"

namespace px::killswitch {
class RunControl;
}

namespace px::supervisor {

class KillSwitch {
 public:
  using Say = std::function<void(const run::Notice&)>;
  // What a pause, a resume or a kill asks of the run's other services (from
  // the control socket's thread).
  struct Hooks {
    std::function<void()> cut_network, restore_network;
    std::function<void()> frozen;  // the run is frozen: nothing of it is halfway through a write
    Say say;
    // The run's network rule and questions (NetworkProxy::handle): requests
    // whose op the kill switch does not know.
    std::function<std::optional<nlohmann::json>(const nlohmann::json& request, const std::string& by)>
        network;
    // A pause, resume, kill or leftovers' kill as it happens (killswitch::RunHooks::event).
    std::function<void(const nlohmann::json&)> event;
  };

  explicit KillSwitch(const run::RunPlan& plan);
  ~KillSwitch();
  KillSwitch(const KillSwitch&) = delete;
  KillSwitch& operator=(const KillSwitch&) = delete;

  Status start(const std::string& run_id, Hooks hooks, run::RunRecord& record);
  // The socket and registry entry, then `pid` (the command's first process)
  // held; a process the switch cannot hold is said, not an error.
  Status on_started(pid_t pid, bool enters_cgroup);
  void stop(run::RunRecord& record);
  void release();

  // The run's control, or null before start() (any thread). It outlives
  // every service's use of it: it goes with this service, after the others.
  killswitch::RunControl* control() const;
  bool was_killed() const;

 private:
  const run::RunPlan& plan_;
  Say say_;
  mutable std::mutex mu_;  // control_: read by the signals', the socket's and the seal's threads
  std::unique_ptr<killswitch::RunControl> control_;
};

}  // namespace px::supervisor
