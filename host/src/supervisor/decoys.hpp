#pragma once
// Decoy credentials in an agent's home: files that look like credentials, so
// that any attempt to read them during a run is flagged in the run record.
//
// The real secret paths (~/.aws, ~/.ssh, ~/.config/gh/hosts.yml, ...) are
// denied by the policy under the agent's home too, so a decoy there could
// never be opened. Decoys go to look-alike paths the policy leaves readable:
// ~/.config/aws/credentials, ~/.ssh-backup/id_rsa, ~/.config/gh/hosts.yml.bak,
// ~/.git-credentials.old. Their values are random and valid-looking but valid
// nowhere.
//
// Detection during the run: fanotify (FAN_OPEN/FAN_ACCESS on each file) when
// the supervisor may use it (CAP_SYS_ADMIN), which gives the pid of the
// process that opened the file; otherwise inotify (IN_OPEN/IN_ACCESS), which
// sees the open but not who did it. Limits are in docs/kill-switch.md.
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "common/watch_thread.hpp"
#include "run/notice.hpp"
#include "run/record.hpp"

namespace px::killswitch {
class RunControl;
}

namespace px::supervisor {

namespace fs = std::filesystem;

// The decoy paths under `home`, planted or not.
std::vector<fs::path> decoy_paths(const fs::path& home);
// Plants the decoys (0600; parent dirs 0700 when created). An existing file
// is left alone (it may be the user's). Returns the files planted now.
Result<std::vector<fs::path>> plant_decoys(const fs::path& home);

using run::DecoyHit;  // one type: the record keeps what the watch saw

class DecoyWatch {
 public:
  // Watches the decoys that exist under `home`. With fanotify, `belongs_to_run`
  // (when given) drops opens by processes that are not the run's (the user's
  // backup tool, say); a process already gone is kept.
  // `allow_fanotify` false forces inotify (tests of the unprivileged path).
  // `on_hit` (when given) is told of each hit as it comes, on the watch's
  // thread (the run's event stream); stop() returns them all.
  static Result<std::unique_ptr<DecoyWatch>> start(const fs::path& home,
                                                   std::function<bool(pid_t)> belongs_to_run = {},
                                                   bool allow_fanotify = true,
                                                   std::function<void(const DecoyHit&)> on_hit = {});
  ~DecoyWatch();
  DecoyWatch(const DecoyWatch&) = delete;
  DecoyWatch& operator=(const DecoyWatch&) = delete;

  // Ends the watch; returns every hit, each (path, event, pid) once.
  std::vector<DecoyHit> stop();
  // "fanotify" or "inotify".
  const std::string& method() const { return method_; }
  std::size_t watched() const { return paths_.size(); }
  // The fanotify or inotify instance (RunControl::hold_until_exit: its last close waits for the kernel).
  int descriptor() const { return fd_.get(); }

 private:
  DecoyWatch() = default;
  void drain_fanotify();
  void drain_inotify();
  void add_hit(DecoyHit hit);

  std::string method_;
  std::vector<fs::path> paths_;
  std::vector<int> wds_;  // inotify watch descriptors, parallel to paths_
  UniqueFd fd_;
  std::function<bool(pid_t)> belongs_to_run_;
  std::function<void(const DecoyHit&)> on_hit_;
  std::mutex mu_;
  std::vector<DecoyHit> hits_;
  WatchThread watch_;  // last: stopped before what its callback uses goes
};

// The decoy credentials as one service of the run (supervisor/run.cpp):
// watched once the command's first process exists, what touched them into
// the record when the run ends.
class RunDecoys {
 public:
  using Say = std::function<void(const run::Notice&)>;
  using OnHit = std::function<void(DecoyHit)>;
  // `home`: the agent's home with its decoys planted; empty: the run has none.
  // `on_hit`: each hit as it comes (the watch's thread), for the run's events.
  RunDecoys(fs::path home, Say say, OnHit on_hit = {})
      : home_(std::move(home)), say_(std::move(say)), on_hit_(std::move(on_hit)) {}

  // `control` tells the run's processes from others (fanotify) and holds the
  // watch's descriptor past the run's exit status (its last close waits for
  // the kernel). It outlives this service's use of it.
  void on_started(killswitch::RunControl& control, run::RunRecord& record);
  // Every hit into the record, each a notice too. Once; later calls do nothing.
  void stop(run::RunRecord& record);

 private:
  fs::path home_;
  Say say_;
  OnHit on_hit_;
  std::unique_ptr<DecoyWatch> watch_;
};

}  // namespace px::supervisor
